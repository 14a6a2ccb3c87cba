package web

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/payhook/payhook/server/route"
)

// assetFS holds the assets every part uses (style.css).
//
//go:embed assets
var assetFS embed.FS

// AssetPrefix is where the embedded assets are served (route.Assets): under
// the checkout path, whose first segment is reserved (no ticker starts with
// it) and where no payment_id is named "assets".
const AssetPrefix = route.Assets

// assetDir is the directory of a part's file system that holds its assets.
const assetDir = "assets"

// Assets serves the embedded assets, the shared ones and every part's, at
// AssetPrefix: same origin, so the CSP's 'self' admits them, with the
// headers of Secure, cached for an hour. Only files are served: a
// directory or an unknown name is a 404 (not cached).
type Assets struct {
	// files maps an asset's name to the file system holding it.
	files map[string]fs.FS
}

// NewAssets returns the server of the shared assets and those of parts,
// each a part's embedded file system with its assets in assets/. Two
// files of one name are an error: no part replaces another's file.
func NewAssets(parts ...fs.FS) (*Assets, error) {
	a := &Assets{files: map[string]fs.FS{}}
	for _, part := range append([]fs.FS{assetFS}, parts...) {
		dir, err := fs.Sub(part, assetDir)
		if err != nil {
			return nil, fmt.Errorf("assets: %w", err)
		}
		entries, err := fs.ReadDir(dir, ".")
		if err != nil {
			return nil, fmt.Errorf("assets: %w", err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			if _, dup := a.files[e.Name()]; dup {
				return nil, fmt.Errorf("assets: two parts have %s", e.Name())
			}
			a.files[e.Name()] = dir
		}
	}
	return a, nil
}

// ServeHTTP serves the asset the path below AssetPrefix names.
func (a *Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	Secure(w)
	name, ok := strings.CutPrefix(r.URL.Path, AssetPrefix)
	dir, known := a.files[name]
	if !ok || !known {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	http.ServeFileFS(w, r, dir, name)
}
