package ratelimit

import (
	"context"
	"errors"
	"net/netip"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/payhook/payhook/server/interceptor"
)

// The metadata the server's own client connection adds to a forwarded
// call: the limiter's token, and the client network its HTTP request came
// from (none for calls the server makes for itself, such as /healthz's).
const (
	mdToken   = "payhook-limiter-token"
	mdNetwork = "payhook-client-network"
	// mdAddr is the client's address itself (the audit log's "from where").
	mdAddr = "payhook-client-addr"
)

// Unary is the server interceptor of unary calls; it runs after
// authentication (interceptor.Config.LimitUnary). A call with a key takes
// a token of its key's bucket; a call without one (a PUBLIC or DEVNET
// method) takes one of its client network's. The RateLimit headers go in
// the answer's header metadata; a refused call is ResourceExhausted with
// them, and Retry-After, in its trailer. A *Denied the handler returns (a
// quota) is answered the same way.
func (l *Limiter) Unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	// SetTrailer fails only outside a gRPC server's call.
	trailer := func(md metadata.MD) { _ = grpc.SetTrailer(ctx, md) }
	if err := l.admit(ctx, info.FullMethod, func(md metadata.MD) error { return grpc.SetHeader(ctx, md) }, trailer); err != nil {
		return nil, err
	}
	resp, err := h(ctx, req)
	return resp, l.refusal(err, trailer)
}

// Stream is Unary's counterpart for streaming calls: a stream takes one
// token when it opens.
func (l *Limiter) Stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := l.admit(ss.Context(), info.FullMethod, ss.SetHeader, ss.SetTrailer); err != nil {
		return err
	}
	return l.refusal(h(srv, ss), ss.SetTrailer)
}

// admit takes the call's token and sets its headers (header on an allowed
// call, trailer on a refused one); it returns the refusal.
func (l *Limiter) admit(ctx context.Context, method string, header func(metadata.MD) error, trailer func(metadata.MD)) error {
	if exempt(method) {
		return nil
	}
	var (
		r       Result
		limited bool
		err     error
	)
	if k, ok := interceptor.KeyFrom(ctx); ok {
		r, limited, err = l.Key(ctx, k.ID, k.ProjectID)
	} else if n, ok := l.callerNetwork(ctx); ok {
		r, limited, err = l.Network(ctx, n)
	}
	if !limited {
		return err
	}
	if err != nil {
		trailer(r.Metadata())
		return err
	}
	_ = header(r.Metadata()) // fails only once headers went out: none have
	return nil
}

// refusal sets the trailer of a *Denied the handler returned.
func (l *Limiter) refusal(err error, trailer func(metadata.MD)) error {
	var d *Denied
	if errors.As(err, &d) {
		trailer(d.Result.Metadata())
	}
	return err
}

// exempt reports whether method is one of the services outside payhook's
// contract (health checks, reflection): load balancers probe them often,
// from one network, and they cost nothing.
func exempt(method string) bool {
	svc, _, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
	for _, s := range interceptor.ExemptServices {
		if s == svc {
			return true
		}
	}
	return false
}

// callerNetwork is the client network of a call without a key: the one
// the server's own connection names for a forwarded call (none for the
// server's own calls), the peer's for a direct gRPC client.
func (l *Limiter) callerNetwork(ctx context.Context) (netip.Prefix, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	if tok := md.Get(mdToken); len(tok) > 0 && l.internal(tok[0]) {
		nets := md.Get(mdNetwork)
		if len(nets) == 0 {
			return netip.Prefix{}, false
		}
		n, err := netip.ParsePrefix(nets[0])
		return n, err == nil
	}
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return netip.Prefix{}, false
	}
	ap, err := netip.ParseAddrPort(p.Addr.String())
	if err != nil {
		return netip.Prefix{}, false
	}
	return Network(ap.Addr()), true
}

// DialOptions are the options of the server's own client connection (the
// one REST and browser calls are forwarded over): they mark its calls with
// the limiter's token and the client network the HTTP request came from
// (Limiter.HTTP put it in the request's context).
func (l *Limiter) DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			return invoker(l.outgoing(ctx), method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return streamer(l.outgoing(ctx), desc, cc, method, opts...)
		}),
	}
}

// outgoing sets the token and the network in ctx's outgoing metadata,
// replacing any a client sent (the gateway forwards Grpc-Metadata-*
// headers).
func (l *Limiter) outgoing(ctx context.Context) context.Context {
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set(mdToken, l.token)
	md.Delete(mdNetwork)
	md.Delete(mdAddr)
	if a, ok := clientFrom(ctx); ok {
		md.Set(mdNetwork, Network(a).String())
		md.Set(mdAddr, a.String())
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// CallerAddr is the address of a call's client: the one the server's own
// connection names for a forwarded call (the HTTP request's, ClientAddr:
// through the trusted proxies), the peer's for a direct gRPC client. A
// client's own metadata is never believed: the forwarded address counts
// only with the limiter's token.
func (l *Limiter) CallerAddr(ctx context.Context) (netip.Addr, bool) {
	md, _ := metadata.FromIncomingContext(ctx)
	if tok := md.Get(mdToken); len(tok) > 0 && l.internal(tok[0]) {
		addrs := md.Get(mdAddr)
		if len(addrs) == 0 {
			return netip.Addr{}, false
		}
		a, err := netip.ParseAddr(addrs[0])
		return a, err == nil
	}
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return netip.Addr{}, false
	}
	ap, err := netip.ParseAddrPort(p.Addr.String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

type clientKey struct{}

// withClient returns ctx carrying the client address a.
func withClient(ctx context.Context, a netip.Addr) context.Context {
	return context.WithValue(ctx, clientKey{}, a)
}

// clientFrom returns the client address ctx carries.
func clientFrom(ctx context.Context) (netip.Addr, bool) {
	a, ok := ctx.Value(clientKey{}).(netip.Addr)
	return a, ok
}
