package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
)

// logRequests logs one line for every request: "verified" when its
// signature checked out (the handler behind the verifier says so with
// markVerified), else "rejected (why)", why being the verifier's answer
// ("missing signature", "invalid signature", ...). It never reads the
// request: verification comes first.
func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		vw := &verdictWriter{ResponseWriter: w, status: http.StatusOK, log: log, attrs: []any{"method", r.Method, "path", r.URL.Path}}
		next.ServeHTTP(vw, r)
		if !vw.verified {
			log.Warn("rejected ("+vw.why()+")", append(vw.attrs, "status", vw.status)...)
		}
	})
}

// markVerified logs "verified" for logRequests, before the request is
// processed; the handler behind the verifier calls it first.
func markVerified(w http.ResponseWriter) {
	if vw, ok := w.(*verdictWriter); ok && !vw.verified {
		vw.verified = true
		vw.log.Info("verified", vw.attrs...)
	}
}

// verdictWriter keeps the status and the start of the body of an answer,
// which says why a request was rejected.
type verdictWriter struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	verified bool
	log      *slog.Logger
	attrs    []any // the request's, for both lines
}

func (v *verdictWriter) WriteHeader(code int) {
	v.status = code
	v.ResponseWriter.WriteHeader(code)
}

func (v *verdictWriter) Write(p []byte) (int, error) {
	if room := 512 - v.body.Len(); room > 0 {
		v.body.Write(p[:min(room, len(p))])
	}
	return v.ResponseWriter.Write(p)
}

// why is the error of a {"status":"error","error":...} answer, else the
// answer's text or status.
func (v *verdictWriter) why() string {
	var e struct{ Error string }
	if json.Unmarshal(v.body.Bytes(), &e) == nil && e.Error != "" {
		return e.Error
	}
	if s := strings.TrimSpace(v.body.String()); s != "" {
		return s
	}
	return http.StatusText(v.status)
}
