package main

import (
	"io"

	"github.com/payhook/payhook/server/admin"
)

// seedFileDefaultText describes defaultSeedFile in --help.
const seedFileDefaultText = "$XDG_CONFIG_HOME/payhook/seed, else ~/.config/payhook/seed"

// defaultSeedFile is where serve and seed init keep the address seed when
// --seed-file (PAYHOOK_SEED_FILE) is not given (admin.DefaultSeedPath: the
// user's configuration directory, or ./payhook.seed of earlier versions
// with a notice on stderr).
func defaultSeedFile(stderr io.Writer) string { return admin.DefaultSeedPath(stderr) }
