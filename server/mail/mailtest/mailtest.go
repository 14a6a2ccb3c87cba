// Package mailtest runs a real SMTP server (github.com/emersion/go-smtp)
// on loopback for tests of what payhook sends: it takes messages as an
// SMTP server does, over STARTTLS with a certificate of its own when asked
// and with AUTH PLAIN when given credentials, records them, and refuses
// what a test tells it to. Import it from _test.go files only.
package mailtest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/payhook/payhook/internal/clock"
)

// Options shape a Server.
type Options struct {
	// TLS offers STARTTLS with a certificate for 127.0.0.1 and localhost
	// that Server.Roots trusts; without it the server speaks plain SMTP.
	TLS bool
	// Username and Password, when set, make AUTH PLAIN required before
	// MAIL (only over TLS, unless TLS is off).
	Username, Password string
}

// Server is a running SMTP server; it is closed when the test ends.
type Server struct {
	// Host and Port are where it listens (127.0.0.1).
	Host string
	Port int
	// Roots trusts the server's certificate (nil without TLS).
	Roots *x509.CertPool

	opts    Options
	srv     *smtp.Server
	mu      sync.Mutex
	msgs    []Message
	arrived chan struct{}
	// refuseData answers the next so many DATA with refuseCode.
	refuseData, refuseCode int
	// refuseRcpt answers RCPT TO of these addresses with their code.
	refuseRcpt map[string]int
	refused    int
}

// Message is one message the server took.
type Message struct {
	// From and To are the envelope (MAIL FROM, RCPT TO).
	From string
	To   []string
	// Raw is the message as sent (headers and body).
	Raw []byte
	// TLS is whether the session ran over TLS; User is who authenticated
	// ("" for none).
	TLS  bool
	User string
}

// Start starts a server on 127.0.0.1 with opts.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{opts: opts, arrived: make(chan struct{}, 1), refuseRcpt: map[string]int{}}
	s.srv = smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{s: s, c: c}, nil
	}))
	s.srv.Domain = "mailtest.localhost"
	s.srv.ReadTimeout, s.srv.WriteTimeout = 30*time.Second, 30*time.Second
	s.srv.AllowInsecureAuth = !opts.TLS
	if opts.TLS {
		cert, roots, err := selfSigned()
		if err != nil {
			t.Fatalf("mailtest: certificate: %v", err)
		}
		s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.Roots = roots
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mailtest: listen: %v", err)
	}
	a := l.Addr().(*net.TCPAddr)
	s.Host, s.Port = a.IP.String(), a.Port
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = s.srv.Close()
		// Close closes the listeners Serve has registered; one closed before
		// its goroutine ran would be missed, so close it here too.
		_ = l.Close()
		<-done
	})
	return s
}

// URL is payhook's --smtp-url for this server, with from as the sender:
// smtp:// with STARTTLS when the server offers it, tls=none otherwise, and
// the credentials the server requires.
func (s *Server) URL(from string) string {
	u := url.URL{Scheme: "smtp", Host: net.JoinHostPort(s.Host, strconv.Itoa(s.Port))}
	q := url.Values{"from": {from}}
	if !s.opts.TLS {
		q.Set("tls", "none")
	}
	if s.opts.Username != "" {
		u.User = url.UserPassword(s.opts.Username, s.opts.Password)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// RefuseData makes the server answer the end of the next n messages' DATA
// with code (451: try again later; 554: refused), taking none of them.
func (s *Server) RefuseData(n, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseData, s.refuseCode = n, code
}

// RefuseRecipient makes the server answer RCPT TO:<addr> with code from
// now on (550: no such user).
func (s *Server) RefuseRecipient(addr string, code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuseRcpt[strings.ToLower(addr)] = code
}

// Refused is how many messages or recipients the server refused.
func (s *Server) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Messages returns the messages taken so far, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Wait returns the messages taken once there are at least n, failing the
// test if they do not arrive within a minute.
func (s *Server) Wait(t testing.TB, n int) []Message {
	t.Helper()
	deadline := time.NewTimer(time.Minute)
	defer deadline.Stop()
	for {
		if got := s.Messages(); len(got) >= n {
			return got
		}
		select {
		case <-s.arrived:
		case <-deadline.C:
			t.Fatalf("mailtest: %d messages arrived, want %d", len(s.Messages()), n)
		}
	}
}

// session is one SMTP session.
type session struct {
	s    *Server
	c    *smtp.Conn
	user string
	from string
	to   []string
}

// AuthMechanisms implements smtp.AuthSession: PLAIN when the server has
// credentials.
func (ss *session) AuthMechanisms() []string {
	if ss.s.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

// Auth implements smtp.AuthSession.
func (ss *session) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain || ss.s.opts.Username == "" {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != ss.s.opts.Username || password != ss.s.opts.Password {
			return smtp.ErrAuthFailed
		}
		ss.user = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.s.opts.Username != "" && ss.user == "" {
		return smtp.ErrAuthRequired
	}
	ss.from = from
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	ss.s.mu.Lock()
	code := ss.s.refuseRcpt[strings.ToLower(to)]
	if code != 0 {
		ss.s.refused++
	}
	ss.s.mu.Unlock()
	if code != 0 {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCodeNotSet, Message: "refused by mailtest"}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s := ss.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refuseData > 0 {
		s.refuseData--
		s.refused++
		return &smtp.SMTPError{Code: s.refuseCode, EnhancedCode: smtp.EnhancedCodeNotSet, Message: "refused by mailtest"}
	}
	_, tlsOn := ss.c.TLSConnectionState()
	s.msgs = append(s.msgs, Message{From: ss.from, To: append([]string(nil), ss.to...), Raw: raw, TLS: tlsOn, User: ss.user})
	select {
	case s.arrived <- struct{}{}:
	default:
	}
	return nil
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error { return nil }

// Header is the message's header.
func (m Message) Header() netmail.Header {
	msg, err := netmail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		return netmail.Header{}
	}
	return msg.Header
}

// Subject is the decoded Subject header.
func (m Message) Subject() string {
	raw := m.Header().Get("Subject")
	s, err := new(mime.WordDecoder).DecodeHeader(raw)
	if err != nil {
		return raw
	}
	return s
}

// Text is the decoded text/plain part ("" when there is none).
func (m Message) Text() string { return m.part("text/plain") }

// HTML is the decoded text/html part ("" when there is none).
func (m Message) HTML() string { return m.part("text/html") }

// part finds the decoded body of media type want, in a single-part or a
// multipart message.
func (m Message) part(want string) string {
	msg, err := netmail.ReadMessage(bytes.NewReader(m.Raw))
	if err != nil {
		return ""
	}
	return findPart(msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body, want)
}

func findPart(contentType, encoding string, body io.Reader, want string) string {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt = "text/plain"
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextRawPart()
			if err != nil {
				return ""
			}
			if s := findPart(p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p, want); s != "" {
				return s
			}
		}
	}
	if mt != want {
		return ""
	}
	if strings.EqualFold(encoding, "quoted-printable") {
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return ""
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n")
}

// selfSigned makes a certificate for 127.0.0.1 and localhost and the pool
// that trusts it.
func selfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := clock.Now() // a certificate is valid by the wall clock
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mailtest"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, roots, nil
}
