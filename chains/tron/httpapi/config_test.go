package httpapi_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/payhook/payhook/chains/family"
	"github.com/payhook/payhook/chains/tron/httpapi"
)

// TestConfig: Validate names the bad field and never repeats credentials.
func TestConfig(t *testing.T) {
	trx, usdt := ticker(t, "trx"), ticker(t, "trc20/usdt")
	btc, _ := family.DefaultRegistry().Lookup("btc")
	for _, c := range []struct {
		name string
		cfg  httpapi.Config
		bad  string // part of the error; "" for a valid config
	}{
		{"trx", httpapi.Config{Ticker: trx, URL: "http://127.0.0.1:8090"}, ""},
		{"token", httpapi.Config{Ticker: usdt, URL: "https://api.trongrid.io/"}, ""},
		{"options", httpapi.Config{Ticker: usdt, URL: "https://apikey:k@h/prefix?contract=TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf&solidity=http%3A%2F%2Fh%3A8091"}, ""},
		{"not tron", httpapi.Config{Ticker: btc, URL: "http://h"}, "Ticker"},
		{"bad scheme", httpapi.Config{Ticker: trx, URL: "ftp://user:s3cr3t@h"}, "scheme"},
		{"no host", httpapi.Config{Ticker: trx, URL: "http://"}, "no host"},
		{"unparsable", httpapi.Config{Ticker: trx, URL: "http://user:s3cr3t@h:port/\x7f"}, "does not parse"},
		{"unknown option", httpapi.Config{Ticker: trx, URL: "http://h?apikey=s3cr3t"}, "unknown option"},
		{"contract on trx", httpapi.Config{Ticker: trx, URL: "http://h?contract=TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"}, "native"},
		{"bad contract", httpapi.Config{Ticker: usdt, URL: "http://h?contract=0xdAC17F958D2ee523a2206206994597C13D831ec7"}, "contract"},
		{"bad solidity", httpapi.Config{Ticker: trx, URL: "http://h?solidity=h:8091"}, "solidity"},
		{"batch", httpapi.Config{Ticker: trx, URL: "http://h", BatchBlocks: 101}, "BatchBlocks"},
		{"expiration", httpapi.Config{Ticker: trx, URL: "http://h", Expiration: 24 * time.Hour}, "Expiration"},
		{"energy", httpapi.Config{Ticker: usdt, URL: "http://h", TokenEnergy: -1}, "TokenEnergy"},
		{"timeout", httpapi.Config{Ticker: trx, URL: "http://h", Timeout: -time.Second}, "Timeout"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			_, newErr := httpapi.New(c.cfg)
			switch {
			case c.bad == "" && (err != nil || newErr != nil):
				t.Errorf("Validate: %v; New: %v", err, newErr)
			case c.bad != "" && (!errors.Is(err, httpapi.ErrInvalidConfig) || !errors.Is(newErr, httpapi.ErrInvalidConfig) || !strings.Contains(err.Error(), c.bad)):
				t.Errorf("Validate: %v; New: %v; want ErrInvalidConfig naming %q", err, newErr, c.bad)
			case err != nil && strings.Contains(err.Error(), "s3cr3t"):
				t.Errorf("error shows the credentials: %v", err)
			}
		})
	}
}

// TestConfigDefaults: zero fields get their defaults.
func TestConfigDefaults(t *testing.T) {
	c := httpapi.Config{Ticker: ticker(t, "trx"), URL: "http://h"}.WithDefaults()
	if c.Timeout != httpapi.DefaultTimeout || c.BatchBlocks != httpapi.DefaultBatchBlocks || c.Expiration != httpapi.DefaultExpiration ||
		c.TokenEnergy != httpapi.DefaultTokenEnergy || c.Client == nil || c.Client.Timeout != httpapi.DefaultTimeout {
		t.Errorf("defaults: %+v", c)
	}
}
