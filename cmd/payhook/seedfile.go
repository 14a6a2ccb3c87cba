package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/payhook/payhook/server"
)

// seedFileDefaultText describes defaultSeedFile in --help.
const seedFileDefaultText = "$XDG_CONFIG_HOME/payhook/seed, else ~/.config/payhook/seed"

// defaultSeedFile is where serve and seed init keep the address seed when
// --seed-file (PAYHOOK_SEED_FILE) is not given: the user's configuration
// directory ($XDG_CONFIG_HOME/payhook/seed, else ~/.config/payhook/seed on
// Linux; os.UserConfigDir elsewhere), outside any working tree, so that no
// clone of the repository ever holds it or commits it. Without a home
// directory it is server.DefaultSeedFile, in the working directory.
//
// A seed at server.DefaultSeedFile in the working directory (where earlier
// versions kept it) is used while the new place has none, with a notice on
// stderr: funds may depend on it, so it is never silently replaced by a new
// one.
func defaultSeedFile(stderr io.Writer) string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return server.DefaultSeedFile
	}
	path := filepath.Join(dir, "payhook", "seed")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if _, err := os.Stat(server.DefaultSeedFile); err == nil {
		fmt.Fprintf(stderr, "payhook: using the address seed in ./%s (where earlier versions kept it); move it to %s, or name it with --seed-file\n", server.DefaultSeedFile, path)
		return server.DefaultSeedFile
	}
	return path
}
