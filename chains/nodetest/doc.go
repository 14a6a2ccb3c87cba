// Package nodetest starts real chain nodes for tests (litecoind in regtest,
// anvil) in temporary directories, on free loopback ports, and stops them
// when the test ends. Import it only from _test.go files.
//
// A test that needs a program calls Need: where the program is absent the
// test is skipped with a message saying how to install it, except under
// CI (PAYHOOK_CI set by .ci/run, or CI=true), where absence fails the test:
// CI never passes by skipping.
package nodetest
