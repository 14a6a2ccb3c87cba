package export

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
)

// Format is an export's file format.
type Format string

// The formats.
const (
	// CSV is RFC 4180 text (encoding/csv) with a header row, every
	// column a string.
	CSV Format = "csv"
	// JSON is one JSON array of row objects, written element by element
	// (one object a line), every value a string.
	JSON Format = "json"
)

// ParseFormat reads the format parameter; empty is CSV.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case "", CSV:
		return CSV, nil
	case JSON:
		return JSON, nil
	}
	return "", fmt.Errorf("format %q: %w", s, ErrFormat)
}

// ContentType is f's media type.
func (f Format) ContentType() string {
	if f == JSON {
		return "application/json"
	}
	return "text/csv; charset=utf-8"
}

// Row is one exported ledger line. Every field is text as written: amounts
// are decimal strings, never floats; an unknown reference or value is "".
type Row struct {
	// EntryID is the ledger line's id: rows are in its order, and two
	// exports of adjoining ranges never share one.
	EntryID string `json:"entry_id"`
	// Time is when the line was journaled, RFC 3339 in UTC.
	Time string `json:"time"`
	// Kind is what the row records (see the package doc).
	Kind string `json:"kind"`
	// Coin is the coin as the merchant API names it (btc, trc20_usdt).
	Coin string `json:"coin"`
	// Amount is what the project's balance moved by, in coin units.
	Amount string `json:"amount"`
	// FiatValue is Amount valued at the time in FiatCurrency, and
	// FiatSource where the rate came from (payment, price:<providers>).
	FiatValue    string `json:"fiat_value"`
	FiatCurrency string `json:"fiat_currency"`
	FiatSource   string `json:"fiat_source"`
	// TxID is the transaction: the outgoing one for lines of one, else the
	// payment's incoming one.
	TxID string `json:"txid"`
	// InvoiceID is the invoice's public id, PayoutID the payout's id and
	// RefundID the refund's id, when the line is about one.
	InvoiceID string `json:"invoice_id"`
	PayoutID  string `json:"payout_id"`
	RefundID  string `json:"refund_id"`
}

// Columns are the CSV header, in the order of Row's fields (and the JSON
// objects' member names).
var Columns = []string{"entry_id", "time", "kind", "coin", "amount", "fiat_value", "fiat_currency", "fiat_source", "txid", "invoice_id", "payout_id", "refund_id"}

func (r *Row) fields() []string {
	return []string{r.EntryID, r.Time, r.Kind, r.Coin, r.Amount, r.FiatValue, r.FiatCurrency, r.FiatSource, r.TxID, r.InvoiceID, r.PayoutID, r.RefundID}
}

// Writer writes rows in one format. Flush hands what is buffered to the
// underlying writer; Close ends the document (the JSON array's bracket)
// and flushes. Write after Close is a bug.
type Writer interface {
	Write(r *Row) error
	Flush() error
	Close() error
}

// NewWriter returns a Writer of format f on w; the CSV header or the JSON
// array's opening bracket is written with the first Flush or Close, so an
// export without rows is still a whole document.
func NewWriter(w io.Writer, f Format) Writer {
	if f == JSON {
		return &jsonWriter{w: bufio.NewWriter(w)}
	}
	return &csvWriter{w: csv.NewWriter(w)}
}

type csvWriter struct {
	w      *csv.Writer
	header bool
}

func (c *csvWriter) start() error {
	if c.header {
		return nil
	}
	c.header = true
	return c.w.Write(Columns)
}

func (c *csvWriter) Write(r *Row) error {
	if err := c.start(); err != nil {
		return err
	}
	return c.w.Write(r.fields())
}

func (c *csvWriter) Flush() error {
	if err := c.start(); err != nil {
		return err
	}
	c.w.Flush()
	return c.w.Error()
}

func (c *csvWriter) Close() error { return c.Flush() }

// jsonWriter writes "[\n", then each row as one object on its own line,
// separated by ",\n", then "\n]\n" ("[]\n" without rows).
type jsonWriter struct {
	w       *bufio.Writer
	started bool
	rows    int
}

func (j *jsonWriter) start() {
	if !j.started {
		j.started = true
		_, _ = j.w.WriteString("[") // a bufio.Writer's error sticks: Flush returns it
	}
}

func (j *jsonWriter) Write(r *Row) error {
	j.start()
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if j.rows > 0 {
		_, _ = j.w.WriteString(",") // sticky, as above
	}
	j.rows++
	_, _ = j.w.WriteString("\n") // sticky, as above
	_, err = j.w.Write(b)
	return err
}

func (j *jsonWriter) Flush() error {
	j.start()
	return j.w.Flush()
}

func (j *jsonWriter) Close() error {
	j.start()
	if j.rows > 0 {
		_, _ = j.w.WriteString("\n") // sticky, as above
	}
	_, _ = j.w.WriteString("]\n") // sticky: the Flush below returns it
	return j.w.Flush()
}
