package store

import (
	"database/sql/driver"
	"errors"
	"net"

	"github.com/lib/pq"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Unavailable explains why the database cannot serve a request right now
// (read-only, full, restarting, unreachable), in words fit for an API
// client, or returns "" for any other error. The server answers such
// requests with 503: nothing was changed and the client may retry.
func Unavailable(err error) string {
	if err == nil {
		return ""
	}
	var pqe *pq.Error
	if errors.As(err, &pqe) {
		switch {
		case pqe.Code == "25006":
			return "the database is read-only; nothing was stored, try again later"
		case pqe.Code == "53100":
			return "the database disk is full; nothing was stored, try again later"
		case pqe.Code.Class() == "53", pqe.Code.Class() == "57", pqe.Code.Class() == "08":
			return "the database is unavailable (restarting or overloaded); nothing was stored, try again later"
		}
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_READONLY:
			return "the database is read-only; nothing was stored, try again later"
		case sqlite3.SQLITE_FULL:
			return "the database disk is full; nothing was stored, try again later"
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return "the database is busy; nothing was stored, try again later"
		case sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN:
			return "the database cannot be written; nothing was stored, try again later"
		}
	}
	var ne net.Error
	if errors.Is(err, driver.ErrBadConn) || errors.As(err, &ne) {
		return "the database is unreachable; nothing was stored, try again later"
	}
	return ""
}
