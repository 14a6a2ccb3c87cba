package rpc

import (
	"mime"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/ledger/export"
)

// ExportChunk is the largest part of an export one message carries: well
// below gRPC's default 4 MiB receive limit, large enough that a year of
// rows is a few thousand messages.
const ExportChunk = 64 << 10

// ContentDispositionMetadata is the response header metadata naming the
// export's file, which the REST gateway passes on as Content-Disposition.
const ContentDispositionMetadata = "content-disposition"

// ExportServer implements payhookv1.ExportServiceServer.
type ExportServer struct {
	payhookv1.UnimplementedExportServiceServer
	exporter *export.Exporter
}

// NewExportServer returns the export service over exporter.
func NewExportServer(exporter *export.Exporter) *ExportServer {
	return &ExportServer{exporter: exporter}
}

// ExportLedger implements payhookv1.ExportServiceServer: the range and
// format are checked before anything is sent (a bad one is the call's
// error), then the header metadata names the file and the document
// follows in messages of at most ExportChunk bytes.
func (s *ExportServer) ExportLedger(req *payhookv1.ExportLedgerRequest, stream grpc.ServerStreamingServer[httpbody.HttpBody]) error {
	ctx := stream.Context()
	projectID, err := owner(ctx)
	if err != nil {
		return err
	}
	r, err := export.ParseRange(req.GetFrom(), req.GetTo())
	if err != nil {
		return err
	}
	f, err := export.ParseFormat(req.GetFormat())
	if err != nil {
		return err
	}
	disposition := mime.FormatMediaType("attachment", map[string]string{"filename": r.Name(f)})
	if err := stream.SendHeader(metadata.Pairs(ContentDispositionMetadata, disposition)); err != nil {
		return err
	}
	cw := &chunkWriter{send: stream.Send, contentType: f.ContentType()}
	w := export.NewWriter(cw, f)
	if _, err := s.exporter.Export(ctx, projectID, r, w); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return cw.flush()
}

// chunkWriter gathers what it is given into messages of ExportChunk bytes.
type chunkWriter struct {
	send        func(*httpbody.HttpBody) error
	contentType string
	buf         []byte
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), ExportChunk-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == ExportChunk {
			if err := c.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

// flush sends what is gathered, if anything.
func (c *chunkWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	err := c.send(&httpbody.HttpBody{ContentType: c.contentType, Data: c.buf})
	c.buf = nil
	return err
}
