package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	payhookv1 "github.com/payhook/payhook/gen/payhook/v1"
	"github.com/payhook/payhook/server/admin"
	"github.com/payhook/payhook/server/merchant/project"
)

// walletsFlag collects repeated --wallet values whole (a value holds
// commas, so it is not a listFlag).
type walletsFlag []string

func (w *walletsFlag) String() string     { return strings.Join(*w, " ") }
func (w *walletsFlag) Set(v string) error { *w = append(*w, v); return nil }

func projectCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook project create", stderr)
	dsn := dbFlag(fs)
	registryFile := fs.String("registry-file", "", "JSON ticker registry replacing the embedded one (as serve takes it)")
	name := fs.String("name", "", "the project's name (required)")
	currency := fs.String("currency", "USD", "the project's fiat currency (ISO 4217)")
	var wallets walletsFlag
	fs.Var(&wallets, "wallet", "a payout wallet, TICKER=ADDRESS[,ADDRESS@SHARE...] (repeatable)")
	var accept, confirmations listFlag
	fs.Var(&accept, "accept", "a coin the project accepts (repeatable or comma-separated; default: every coin)")
	fs.Var(&confirmations, "confirmations", "default required confirmations, TICKER=N (repeatable or comma-separated)")
	var scopes listFlag
	fs.Var(&scopes, "scope", "what the project's first API key may do: read, create, payouts, management (repeatable or comma-separated; default: all four)")
	asJSON := fs.Bool("json", false, `print {"project_id":..,"apikey":"..","ipn_secret":"..","apikey_scopes":[..]}`)
	if err := parse(fs, args); err != nil {
		return err
	}
	if strings.TrimSpace(*name) == "" {
		return errors.New("--name: required")
	}
	if err := scopesGiven(fs, scopes); err != nil {
		return err
	}
	if _, err := admin.ParseScopes(scopes); err != nil {
		return fmt.Errorf("--scope: %w", err)
	}
	resp, err := admin.CreateProject(ctx, *dsn, *registryFile, &payhookv1.CreateProjectRequest{
		Name: *name, Currency: *currency, Wallets: wallets, Tickers: accept, Confirmations: confirmations, ApikeyScopes: scopes,
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]any{"project_id": resp.GetProjectId(), "apikey": resp.GetApikey(), "ipn_secret": resp.GetIpnSecret(), "apikey_scopes": resp.GetApikeyScopes()})
	}
	fmt.Fprintf(stdout, "project_id  %d\napikey      %s\nipn_secret  %s\nscopes      %s\n", resp.GetProjectId(), resp.GetApikey(), resp.GetIpnSecret(), strings.Join(resp.GetApikeyScopes(), ","))
	fmt.Fprintf(stderr, "project %q created; its API key and IPN secret are shown only this once.\n", *name)
	return nil
}

func projectList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook project list", stderr)
	dsn := dbFlag(fs)
	asJSON := fs.Bool("json", false, "print the ProjectService's JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	resp, err := admin.ListProjects(ctx, *dsn)
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true, Multiline: true}.Marshal(resp)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, string(b))
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tCURRENCY\tWALLETS")
	for _, p := range resp.GetProjects() {
		var ws []string
		for _, w := range p.GetWallets() {
			ws = append(ws, w.GetTicker()+"="+w.GetAddress()+"@"+w.GetShare())
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", p.GetProjectId(), p.GetName(), p.GetCurrency(), strings.Join(ws, " "))
	}
	return tw.Flush()
}

func projectRotate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook project rotate-secret", stderr)
	dsn := dbFlag(fs)
	id := fs.Int64("project", 0, "the project's id (required)")
	grace := fs.Duration("grace", 24*time.Hour, "how long the old secret keeps signing beside the new one")
	asJSON := fs.Bool("json", false, `print {"ipn_secret":".."}`)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *id <= 0 {
		return errors.New("--project: required")
	}
	secret, err := admin.RotateProjectSecret(ctx, *dsn, *id, *grace)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"ipn_secret": secret})
	}
	fmt.Fprintln(stdout, secret)
	fmt.Fprintf(stderr, "new IPN secret of project %d; the old one keeps signing for %s.\n", *id, *grace)
	return nil
}

func projectRotateCallbackKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook project rotate-callback-key", stderr)
	dsn := dbFlag(fs)
	id := fs.Int64("project", 0, "the project's id (required)")
	grace := fs.Duration("grace", admin.DefaultCallbackKeyGrace, "how long /pubkey/ still publishes the old key beside the new one")
	asJSON := fs.Bool("json", false, `print {"pubkey":".."}`)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *id <= 0 {
		return errors.New("--project: required")
	}
	pub, err := admin.RotateCallbackKey(ctx, *dsn, *id, *grace)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"pubkey": pub})
	}
	fmt.Fprint(stdout, pub)
	fmt.Fprintf(stderr, "new callback signing key of project %d: new callbacks are signed with it at once (running servers within a second); /pubkey/ with the project's API key publishes the old one as previous_pubkey for %s.\n", *id, *grace)
	return nil
}

func projectWallet(ctx context.Context, op string, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook project wallet "+op, stderr)
	dsn := dbFlag(fs)
	registryFile := fs.String("registry-file", "", "JSON ticker registry replacing the embedded one (as serve takes it)")
	id := fs.Int64("project", 0, "the project's id (required)")
	var wallet, ticker *string
	var gap *int
	switch op {
	case "set":
		wallet = fs.String("wallet", "", "TICKER=ADDRESS[,ADDRESS@SHARE...], or TICKER=KEY: the merchant's extended public key or output descriptor (a watch-only wallet); also accepted as the one argument")
		gap = fs.Int("gap", 0, fmt.Sprintf("with a key: how many unused addresses in a row the merchant's wallet scans (its gap limit; default %d, kept when the key is set again)", project.DefaultGapLimit))
	case "remove":
		ticker = fs.String("ticker", "", "the ticker whose wallets are removed (required)")
	}
	n := 0
	if op == "set" {
		n = 1
	}
	pos, err := parseN(fs, args, n)
	if err != nil {
		return err
	}
	if *id <= 0 {
		return errors.New("--project: required")
	}
	switch op {
	case "show":
		return projectWalletShow(ctx, *dsn, *registryFile, *id, stdout)
	case "set":
		if len(pos) == 1 {
			if *wallet != "" {
				return errors.New("want one wallet, as --wallet or as the one argument, not both")
			}
			*wallet = pos[0]
		}
		if *wallet == "" {
			return errors.New("--wallet: required")
		}
		_, value, _ := strings.Cut(*wallet, "=")
		if !project.IsKeySpec(value) {
			if *gap != 0 {
				return errors.New("--gap: only with a key (TICKER=KEY)")
			}
			return admin.SetProjectWallet(ctx, *dsn, *registryFile, *id, *wallet)
		}
		wk, err := admin.SetProjectWatchKey(ctx, *dsn, *registryFile, *id, *wallet, *gap)
		if err != nil {
			return err
		}
		return projectWalletShow(ctx, *dsn, *registryFile, *id, stdout, wk.ID)
	}
	if *ticker == "" {
		return errors.New("--ticker: required")
	}
	return admin.RemoveProjectWallet(ctx, *dsn, *registryFile, *id, *ticker)
}

func projectUpdate(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlagSet("payhook project update", stderr)
	dsn := dbFlag(fs)
	registryFile := fs.String("registry-file", "", "JSON ticker registry replacing the embedded one (as serve takes it)")
	id := fs.Int64("project", 0, "the project's id (required)")
	notify := fs.String("payout-notify-url", "", `where the project's payout webhooks go (a payout done or failed); "" stops them`)
	get := fs.Bool("payout-notify-get", false, "send payout webhooks as GET requests instead of form POSTs")
	var limits listFlag
	fs.Var(&limits, "payout-limit", "TICKER=PER_PAYOUT/PER_DAY: the most a payout, and a UTC day's payouts, may total before a dashboard user must approve (0: no limit); repeatable")
	tolerance := fs.String("underpaid-tolerance", "", "percent (0 to 100, at most 2 decimals) of a checkout's value it may lack and still be paid; a checkout's underpaid_tolerance overrides it")
	late := fs.String("late-payments", "", "credit (a payment after its checkout expired is forwarded as any other) or refund (credited, notified, held for a refund); a checkout's late_payments overrides it")
	autoRefund := fs.Bool("auto-refund-overpaid", false, "approve at once the refunds payers ask for on the hosted page of an overpaid invoice (=false: they wait for the merchant)")
	rateLimit := fs.Float64("rate-limit", 0, "requests per second each of the project's API keys may make (0: serve's --key-rate; negative: no limit)")
	rateBurst := fs.Int64("rate-burst", 0, "requests each of the project's API keys may make at once (0: serve's --key-burst)")
	brandColor := fs.String("brand-color", "", `the hosted pages' accent colour, #rrggbb ("" for payhook's)`)
	contact := fs.String("support-contact", "", `an email address or https URL the hosted pages show payers for help ("" for none)`)
	logo := fs.String("logo", "", `a PNG, JPEG or SVG file of at most 100 KiB shown on the hosted pages ("" removes the logo)`)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *id <= 0 {
		return errors.New("--project: required")
	}
	notifySet := false
	var tolSet, lateSet *string
	var autoSet *bool
	var rateSet *float64
	var burstSet *int64
	var colorSet, contactSet, logoSet *string
	fs.Visit(func(f *flag.Flag) {
		notifySet = notifySet || f.Name == "payout-notify-url" || f.Name == "payout-notify-get"
		switch f.Name {
		case "underpaid-tolerance":
			tolSet = tolerance
		case "late-payments":
			lateSet = late
		case "auto-refund-overpaid":
			autoSet = autoRefund
		case "rate-limit":
			rateSet = rateLimit
		case "rate-burst":
			burstSet = rateBurst
		case "brand-color":
			colorSet = brandColor
		case "support-contact":
			contactSet = contact
		case "logo":
			logoSet = logo
		}
	})
	branding := colorSet != nil || contactSet != nil || logoSet != nil
	if !notifySet && len(limits) == 0 && tolSet == nil && lateSet == nil && autoSet == nil && rateSet == nil && burstSet == nil && !branding {
		return errors.New("nothing to update: give --payout-notify-url, --payout-limit, --underpaid-tolerance, --late-payments, --auto-refund-overpaid, --rate-limit, --rate-burst, --brand-color, --support-contact or --logo")
	}
	if branding {
		// Checked before anything else changes: a bad value updates nothing.
		if err := admin.SetProjectBranding(ctx, *dsn, *id, colorSet, contactSet, logoSet); err != nil {
			return err
		}
	}
	if tolSet != nil || lateSet != nil || autoSet != nil {
		// Checked before anything else changes: a bad value updates nothing.
		if err := admin.SetProjectPaymentExceptions(ctx, *dsn, *id, tolSet, lateSet, autoSet); err != nil {
			return err
		}
	}
	if rateSet != nil || burstSet != nil {
		if err := admin.SetProjectRateLimit(ctx, *dsn, *id, rateSet, burstSet); err != nil {
			return err
		}
	}
	for _, l := range limits {
		ticker, amounts, ok := strings.Cut(l, "=")
		perPayout, perDay, ok2 := strings.Cut(amounts, "/")
		if !ok || !ok2 || ticker == "" {
			return fmt.Errorf("--payout-limit %q: want TICKER=PER_PAYOUT/PER_DAY, such as ltc=0.5/2", l)
		}
		if err := admin.SetProjectPayoutLimit(ctx, *dsn, *registryFile, *id, ticker, perPayout, perDay); err != nil {
			return fmt.Errorf("--payout-limit %q: %w", l, err)
		}
	}
	if notifySet {
		if err := admin.SetProjectPayoutNotify(ctx, *dsn, *id, *notify, !*get); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "project %d updated.\n", *id)
	return nil
}

// projectWalletShow prints project id's watch-only wallets (only those of
// keys only, when given): each key's descriptor, its first addresses for
// the merchant to compare with their wallet's, and how far payhook's
// addresses have run ahead of the last one used.
func projectWalletShow(ctx context.Context, dsn, registryFile string, id int64, stdout io.Writer, only ...int64) error {
	ws, err := admin.ProjectWatchWallets(ctx, dsn, registryFile, id)
	if err != nil {
		return err
	}
	if len(ws) == 0 {
		fmt.Fprintf(stdout, "project %d has no watch-only wallet\n", id)
		return nil
	}
	for _, w := range ws {
		if len(only) > 0 && !slices.Contains(only, w.Key.ID) {
			continue
		}
		fmt.Fprintf(stdout, "%s: watch-only, key %s\n", w.Ticker, w.Key.Descriptor)
		if !strings.Contains(w.Key.Descriptor, "[") && !strings.HasPrefix(w.Key.Descriptor, "xpub") {
			fmt.Fprintf(stdout, "  note: no key origin ([fingerprint/path]): payouts signed offline (PSBT) need it; set the key again as your wallet exports its descriptor\n")
		}
		for _, a := range w.First {
			fmt.Fprintf(stdout, "  /0/%d %s\n", a.Index, a.Address)
		}
		fmt.Fprintf(stdout, "  handed out %d, last used %d, gap limit %d; your wallet must scan at least %d past its last used address\n",
			w.Handed, w.LastUsed, w.Key.GapLimit, w.WalletNeeds())
		if w.Outrun() {
			fmt.Fprintf(stdout, "  WARNING: payhook's addresses have run %d past the gap limit %d: raise your wallet's gap limit to %d (and payhook's with --gap) or it may not show every payment\n",
				w.WalletNeeds(), w.Key.GapLimit, w.WalletNeeds())
		}
	}
	return nil
}

// projectFees prints the service fees a project's watch-only wallets owe:
// per coin, accrued and settled in the period, and outstanding at its end.
func projectFees(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook project fees", stderr)
	dsn := dbFlag(fs)
	registryFile := fs.String("registry-file", "", "JSON ticker registry replacing the embedded one (as serve takes it)")
	id := fs.Int64("project", 0, "the project's id (required)")
	since := fs.String("since", "", "first day of the period, YYYY-MM-DD (UTC); empty: from the start")
	until := fs.String("until", "", "day after the period, YYYY-MM-DD (UTC); empty: until now")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *id <= 0 {
		return errors.New("--project: required")
	}
	day := func(name, v string) (time.Time, error) {
		if v == "" {
			return time.Time{}, nil
		}
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("--%s: %q is not a date YYYY-MM-DD", name, v)
		}
		return d, nil
	}
	from, err := day("since", *since)
	if err != nil {
		return err
	}
	to, err := day("until", *until)
	if err != nil {
		return err
	}
	owed, err := admin.ProjectFeesOwed(ctx, *dsn, *registryFile, *id, from, to)
	if err != nil {
		return err
	}
	if len(owed) == 0 {
		fmt.Fprintf(stdout, "project %d owes no fees: it has no payments to a watch-only wallet\n", *id)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COIN\tACCRUED\tSETTLED\tOUTSTANDING")
	for _, f := range owed {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Ticker, f.Accrued, f.Settled, f.Outstanding)
	}
	return tw.Flush()
}

// projectSettle records fees a project owes as paid outside payhook.
func projectSettle(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("payhook project settle", stderr)
	dsn := dbFlag(fs)
	registryFile := fs.String("registry-file", "", "JSON ticker registry replacing the embedded one (as serve takes it)")
	id := fs.Int64("project", 0, "the project's id (required)")
	ticker := fs.String("ticker", "", "the coin the fees are owed in (required)")
	amount := fs.String("amount", "", "how much of the fees owed was paid, in coin units (required)")
	reference := fs.String("reference", "", "your invoice's reference; each settles once (required)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *id <= 0 {
		return errors.New("--project: required")
	}
	if err := admin.SettleProjectFees(ctx, *dsn, *registryFile, *id, *ticker, *amount, *reference); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "settled %s %s of project %d's fees owed (reference %s)\n", *amount, *ticker, *id, *reference)
	return nil
}
