package dashboard

// Route is one declared route, for the tests that walk them.
type Route struct{ Method, Path, Role string }

// Routes returns the declared routes.
func Routes() []Route {
	out := make([]Route, len(routes))
	for i, rt := range routes {
		out[i] = Route{rt.method, rt.path, string(rt.role)}
	}
	return out
}

// Declared reports whether a route of method is declared for path (below
// Prefix).
func Declared(method, path string) bool {
	rt, _, _ := lookupRoute(method, path)
	return rt != nil
}

// RouteOf returns the declared route of method and path (below Prefix),
// its path as declared ({id} segments and all).
func RouteOf(method, path string) (Route, bool) {
	rt, _, _ := lookupRoute(method, path)
	if rt == nil {
		return Route{}, false
	}
	return Route{rt.method, rt.path, string(rt.role)}, true
}
