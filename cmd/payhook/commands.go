package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// env is what a command runs with: its standard streams and the logger the
// global --log-format and --log-level built.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	logger         *slog.Logger
}

// command is one node of the command tree: a group (subs) or a leaf (run).
// The tree drives dispatch, every group's usage, `help` and completion.
type command struct {
	name string
	// synopsis is the leaf's usage line after "payhook PATH ", e.g.
	// "--name NAME [--operator]".
	synopsis string
	subs     []*command
	run      func(ctx context.Context, e *env, args []string) error
}

// commands returns the command tree. It is built per call: no package
// state.
func commands() *command {
	// prefixed runs a subcommand dispatcher that expects the leaf's own
	// name first (devnet, user, seed and chain parse it themselves).
	prefixed := func(name string, f func(ctx context.Context, e *env, args []string) error) func(context.Context, *env, []string) error {
		return func(ctx context.Context, e *env, args []string) error {
			return f(ctx, e, append([]string{name}, args...))
		}
	}
	devnet := func(ctx context.Context, e *env, args []string) error {
		return devnetCmd(ctx, args, e.stdout, e.stderr)
	}
	return &command{name: "payhook", subs: []*command{
		{name: "serve", synopsis: "[flags]", run: func(ctx context.Context, e *env, args []string) error {
			return serve(ctx, args, e.stdout, e.stderr, e.logger)
		}},
		{name: "migrate", synopsis: "[--db DSN] [--registry-file FILE]", run: func(ctx context.Context, e *env, args []string) error {
			return migrate(ctx, args, e.stdout, e.stderr)
		}},
		{name: "apikey", subs: []*command{
			{name: "create", synopsis: "--name NAME [--project ID] [--scope read,create,payouts,management] [--operator]", run: func(ctx context.Context, e *env, args []string) error {
				return apikeyCreate(ctx, args, e.stdout, e.stderr)
			}},
			{name: "list", synopsis: "[--project ID] [--json]", run: apikeyList},
			{name: "revoke", synopsis: "ID|NAME [--project ID]", run: apikeyRevoke},
		}},
		{name: "project", subs: []*command{
			{name: "create", synopsis: "--name NAME [--currency USD] [--wallet TICKER=ADDRESS[,ADDRESS@SHARE...]]... [--accept btc,eth] [--confirmations btc=2]... [--scope read,create,payouts,management] [--json]",
				run: func(ctx context.Context, e *env, args []string) error {
					return projectCreate(ctx, args, e.stdout, e.stderr)
				}},
			{name: "list", synopsis: "[--json]",
				run: func(ctx context.Context, e *env, args []string) error {
					return projectList(ctx, args, e.stdout, e.stderr)
				}},
			{name: "rotate-secret", synopsis: "--project ID [--grace 24h] [--json]",
				run: func(ctx context.Context, e *env, args []string) error {
					return projectRotate(ctx, args, e.stdout, e.stderr)
				}},
			{name: "rotate-callback-key", synopsis: "--project ID [--grace 72h] [--json]",
				run: func(ctx context.Context, e *env, args []string) error {
					return projectRotateCallbackKey(ctx, args, e.stdout, e.stderr)
				}},
			{name: "update", synopsis: "--project ID [--payout-notify-url URL [--payout-notify-get]] [--payout-limit TICKER=PER_PAYOUT/PER_DAY]... [--underpaid-tolerance PERCENT] [--late-payments credit|refund]",
				run: func(ctx context.Context, e *env, args []string) error {
					return projectUpdate(ctx, args, e.stderr)
				}},
			{name: "fees", synopsis: "--project ID [--since YYYY-MM-DD] [--until YYYY-MM-DD]   (service fees its watch-only wallets owe: accrued, settled, outstanding)",
				run: func(ctx context.Context, e *env, args []string) error {
					return projectFees(ctx, args, e.stdout, e.stderr)
				}},
			{name: "settle", synopsis: "--project ID --ticker TICKER --amount AMOUNT --reference INVOICE   (records fees owed as paid outside payhook)",
				run: func(ctx context.Context, e *env, args []string) error {
					return projectSettle(ctx, args, e.stdout, e.stderr)
				}},
			{name: "wallet", subs: []*command{
				{name: "set", synopsis: "--project ID [--gap N] TICKER=ADDRESS[,ADDRESS@SHARE...] | TICKER=KEY   (KEY: an xpub/zpub/tpub... or a descriptor such as wpkh([fp/84h/0h/0h]xpub.../0/*): a watch-only wallet)",
					run: func(ctx context.Context, e *env, args []string) error {
						return projectWallet(ctx, "set", args, e.stdout, e.stderr)
					}},
				{name: "remove", synopsis: "--project ID --ticker TICKER",
					run: func(ctx context.Context, e *env, args []string) error {
						return projectWallet(ctx, "remove", args, e.stdout, e.stderr)
					}},
				{name: "show", synopsis: "--project ID   (the watch-only wallets: key, first addresses, gap)",
					run: func(ctx context.Context, e *env, args []string) error {
						return projectWallet(ctx, "show", args, e.stdout, e.stderr)
					}},
			}},
		}},
		{name: "user", subs: []*command{
			{name: "create", synopsis: "--project ID --email EMAIL [--role owner|developer|viewer] [--db DSN]   (the password is read from standard input)",
				run: prefixed("create", func(ctx context.Context, e *env, args []string) error {
					return userCmd(ctx, args, e.stdin, e.stdout, e.stderr)
				})},
			{name: "disable", synopsis: "--email EMAIL [--db DSN]   (ends their sessions too)",
				run: prefixed("disable", func(ctx context.Context, e *env, args []string) error {
					return userCmd(ctx, args, e.stdin, e.stdout, e.stderr)
				})},
			{name: "enable", synopsis: "--email EMAIL [--db DSN]   (a disabled user signs in again)",
				run: prefixed("enable", func(ctx context.Context, e *env, args []string) error {
					return userCmd(ctx, args, e.stdin, e.stdout, e.stderr)
				})},
			{name: "role", synopsis: "--email EMAIL --role owner|developer|viewer [--db DSN]   (applies from their next request)",
				run: prefixed("role", func(ctx context.Context, e *env, args []string) error {
					return userCmd(ctx, args, e.stdin, e.stdout, e.stderr)
				})},
			{name: "reset-password", synopsis: "--email EMAIL [--generate] [--db DSN]   (the new password is read from standard input, or generated and printed)",
				run: prefixed("reset-password", func(ctx context.Context, e *env, args []string) error {
					return userCmd(ctx, args, e.stdin, e.stdout, e.stderr)
				})},
			{name: "sessions", subs: []*command{
				{name: "revoke", synopsis: "--email EMAIL [--db DSN]",
					run: prefixed("sessions-revoke", func(ctx context.Context, e *env, args []string) error {
						return userCmd(ctx, args, e.stdin, e.stdout, e.stderr)
					})},
			}},
		}},
		{name: "funds", synopsis: "[--json]", run: func(ctx context.Context, e *env, args []string) error {
			return funds(ctx, args, e.stdout, e.stderr)
		}},
		{name: "payouts", synopsis: "[--json]", run: func(ctx context.Context, e *env, args []string) error {
			return payouts(ctx, args, e.stdout, e.stderr)
		}},
		{name: "watch", synopsis: "--apikey KEY [--address A] [--ticker T] [--uuid U]", run: func(ctx context.Context, e *env, args []string) error {
			return watch(ctx, args, e.stdout, e.stderr)
		}},
		{name: "listen", synopsis: "--apikey KEY --forward-to http://localhost:3000/hook [--address A]", run: func(ctx context.Context, e *env, args []string) error {
			return listen(ctx, args, e.stdout, e.stderr)
		}},
		{name: "seed", subs: []*command{
			{name: "init", synopsis: "[--seed-file PATH] [--encrypt [--seed-passphrase-file FILE]]", run: func(_ context.Context, e *env, args []string) error {
				return seedInit(args, e.stdout, e.stderr)
			}},
			{name: "encrypt", synopsis: "[--seed-file PATH] [--seed-passphrase-file FILE]", run: func(_ context.Context, e *env, args []string) error {
				return seedEncrypt(args, e.stdout, e.stderr)
			}},
			{name: "passphrase", synopsis: "[--seed-file PATH] [--seed-passphrase-file FILE] [--new-passphrase-file FILE]", run: func(_ context.Context, e *env, args []string) error {
				return seedPassphrase(args, e.stdout, e.stderr)
			}},
		}},
		{name: "signer", synopsis: "--policy-file FILE --cert FILE --key FILE --client-ca FILE [--listen ADDR] [--seed-file PATH] [--state-file PATH]", run: func(ctx context.Context, e *env, args []string) error {
			return signerCmd(ctx, args, e.stdout, e.stderr, e.logger)
		}},
		{name: "chain", subs: []*command{
			{name: "status", synopsis: "[--server http://127.0.0.1:8080] [--apikey KEY] [--json]", run: prefixed("status", func(ctx context.Context, e *env, args []string) error {
				return chainCmd(ctx, args, e.stdout, e.stderr)
			})},
		}},
		{name: "devnet", subs: []*command{
			{name: "pay", synopsis: "--ticker btc --address ADDR --amount 0.01 [--fail-execution]", run: prefixed("pay", devnet)},
			{name: "mine", synopsis: "--ticker btc [--blocks 3]", run: prefixed("mine", devnet)},
			{name: "reorg", synopsis: "--ticker btc --depth 2", run: prefixed("reorg", devnet)},
		}},
		{name: "version", synopsis: "[--json]", run: versionCmd},
		{name: "completion", subs: []*command{
			{name: "bash", synopsis: "", run: completionCmd("bash")},
			{name: "zsh", synopsis: "", run: completionCmd("zsh")},
			{name: "fish", synopsis: "", run: completionCmd("fish")},
		}},
	}}
}

// helpError is a leaf's answer to -h or --help: its usage, which runIn
// prints on standard output before succeeding.
type helpError struct{ usage string }

func (h *helpError) Error() string { return "help requested" }
func (h *helpError) Unwrap() error { return flag.ErrHelp }

// usageBuffer holds what a flag set prints while parsing: on --help it
// becomes the helpError's usage (standard output), on a bad flag it goes to
// standard error with the error.
type usageBuffer struct {
	bytes.Buffer
	stderr io.Writer
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

// dispatch runs the command at path (the names so far) with args.
func dispatch(ctx context.Context, c *command, path []string, args []string, e *env) error {
	if c.run != nil {
		return c.run(ctx, e, args)
	}
	if len(args) == 0 {
		if len(path) == 1 {
			fmt.Fprint(e.stderr, usage)
			return errors.New("missing command")
		}
		return fmt.Errorf("missing command; %s", strings.TrimSpace(c.usage(path)))
	}
	if len(path) == 1 && (args[0] == "--version" || args[0] == "-version") {
		// payhook --version is payhook version.
		return versionCmd(ctx, e, args[1:])
	}
	if isHelp(args[0]) {
		if len(path) == 1 && len(args) > 1 {
			// payhook help COMMAND...: that command's help.
			return dispatch(ctx, c, path, append(args[1:], "--help"), e)
		}
		fmt.Fprint(e.stdout, c.usage(path))
		return nil
	}
	for _, s := range c.subs {
		if s.name == args[0] {
			return dispatch(ctx, s, append(path, s.name), args[1:], e)
		}
	}
	if len(path) == 1 {
		fmt.Fprint(e.stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return fmt.Errorf("unknown command %q; %s", strings.Join(append(path[1:], args[0]), " "), strings.TrimSpace(c.usage(path)))
}

// usage is a group's usage: the top-level text, or one line per leaf below
// the group.
func (c *command) usage(path []string) string {
	if len(path) == 1 {
		return usage
	}
	var b strings.Builder
	prefix := "usage: "
	c.walk(path, func(p []string, leaf *command) {
		fmt.Fprintf(&b, "%s%s %s\n", prefix, strings.Join(p, " "), leaf.synopsis)
		prefix = "       "
	})
	fmt.Fprintf(&b, "\nRun \"%s COMMAND --help\" for a command's flags.\n", strings.Join(path, " "))
	return b.String()
}

// walk calls f for every leaf at or below c, with its path.
func (c *command) walk(path []string, f func(path []string, leaf *command)) {
	if c.run != nil {
		f(path, c)
		return
	}
	for _, s := range c.subs {
		s.walk(append(append([]string(nil), path...), s.name), f)
	}
}

// Global flags: accepted anywhere before "--", before or after the
// command, and from PAYHOOK_LOG_FORMAT and PAYHOOK_LOG_LEVEL.
var (
	logFormats = []string{"text", "json"}
	logLevels  = []string{"debug", "info", "warn", "error"}
)

// globalFlags takes --log-format and --log-level (also -log-format, and
// NAME=VALUE forms) out of args and builds the logger they describe,
// writing to stderr. A flag wins over its environment variable; a bad value
// is an error naming the flag or variable and the accepted values.
func globalFlags(args []string, stderr io.Writer) ([]string, *slog.Logger, error) {
	vals := map[string]string{}
	from := map[string]string{}
	for _, name := range []string{"log-format", "log-level"} {
		env := "PAYHOOK_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			vals[name], from[name] = v, env
		}
	}
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || (name != "log-format" && name != "log-level") {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("--%s: needs a value", name)
			}
			i++
			value = args[i]
		}
		vals[name], from[name] = value, "--"+name
	}
	format, level := "text", "info"
	if v, ok := vals["log-format"]; ok {
		format = strings.ToLower(strings.TrimSpace(v))
		if !contains(logFormats, format) {
			return nil, nil, fmt.Errorf("%s: %q is not a log format: use text or json", from["log-format"], v)
		}
	}
	var lvl slog.Level
	if v, ok := vals["log-level"]; ok {
		level = strings.ToLower(strings.TrimSpace(v))
		if !contains(logLevels, level) {
			return nil, nil, fmt.Errorf("%s: %q is not a log level: use debug, info, warn or error", from["log-level"], v)
		}
	}
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("log level %q: %w", level, err)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	if format == "json" {
		return rest, slog.New(slog.NewJSONHandler(stderr, opts)), nil
	}
	return rest, slog.New(slog.NewTextHandler(stderr, opts)), nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
