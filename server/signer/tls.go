package signer

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// ServerTLS is the signer's side of mutual TLS: its certificate (certFile,
// keyFile, PEM) and the CA a client's certificate must chain to (caFile):
// a client without one is refused during the handshake. TLS 1.3 only.
func ServerTLS(certFile, keyFile, caFile string) (*tls.Config, error) {
	cert, pool, err := load("--cert", certFile, "--key", keyFile, "--client-ca", caFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}, nil
}

// ClientTLS is the server's side: its client certificate (certFile,
// keyFile) and the CA the signer's certificate must chain to (caFile),
// for serverName. TLS 1.3 only.
func ClientTLS(certFile, keyFile, caFile, serverName string) (*tls.Config, error) {
	cert, pool, err := load("--signer-cert", certFile, "--signer-key", keyFile, "--signer-ca", caFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: serverName}, nil
}

func load(certFlag, certFile, keyFlag, keyFile, caFlag, caFile string) (tls.Certificate, *x509.CertPool, error) {
	for _, f := range [][2]string{{certFlag, certFile}, {keyFlag, keyFile}, {caFlag, caFile}} {
		if f[1] == "" {
			return tls.Certificate{}, nil, fmt.Errorf("%s: required (mutual TLS)", f[0])
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("%s, %s: %w", certFlag, keyFlag, err)
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("%s: %w", caFlag, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("%s %s: no PEM certificate in it", caFlag, caFile)
	}
	return cert, pool, nil
}
