package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema/field"
	"github.com/shopspring/decimal"
)

// Project is a merchant's account in the merchant interface: it owns API
// keys, addresses, checkouts, deposits, subscriptions and their
// notifications, and holds the IPN secret that signs its webhooks.
type Project struct{ ent.Schema }

// Mixin of the Project.
func (Project) Mixin() []ent.Mixin { return []ent.Mixin{TimeMixin{}} }

// Fields of the Project.
func (Project) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("name").NotEmpty().
			Comment("Operator-chosen label."),
		field.String("currency").NotEmpty().Default("USD").
			Comment("Fiat currency of the project's invoices unless a request names another (ISO 4217 code)."),
		field.String("ipn_secret").Sensitive().
			Comment("Current IPN secret (whsec_ + base64) that signs every webhook attempt, sealed at rest (ent/store); empty only until the server first starts, for a project an admin command made without the secrets key."),
		field.String("previous_ipn_secret").Default("").Sensitive().
			Comment("The secret replaced by the last rotation; it also signs until previous_secret_until."),
		field.Time("previous_secret_until").Optional().Nillable().
			Comment("End of the rotation's grace period."),
		field.JSON("wallets", map[string][]Destination{}).Default(map[string][]Destination{}).
			Comment("Payout wallets per ticker: what a payment without its own forwarding address forwards to, by share."),
		field.JSON("watch_keys", map[string]int64{}).Default(map[string]int64{}).Annotations(entsql.Default(`{}`)).
			Comment("Watch-only wallets per ticker: the merchant's key (watch_keys.id) the project's addresses of the ticker are derived from; such a ticker has no payout wallets and nothing is forwarded."),
		field.JSON("confirmations", map[string]int32{}).Default(map[string]int32{}).
			Comment("Default required confirmations per ticker; the ticker's default when absent."),
		field.JSON("tickers", []string{}).Default([]string{}).
			Comment("Tickers the project accepts; empty accepts every ticker the server supports."),
		field.Text("payout_notify_url").Default("").
			Comment("Where the project's payout webhooks go (a payout done or failed); empty sends none."),
		field.JSON("payout_limits", map[string]PayoutLimit{}).Optional().
			Comment("Per ticker: what a payout, and a day's payouts, may total before a dashboard user must approve."),
		field.Bool("payout_notify_post").Default(true).
			Comment("Payout webhooks are form POSTs; false sends them as GET requests."),
		field.Other("underpaid_tolerance", decimal.Decimal{}).SchemaType(moneyType).Default(decimal.Zero).
			Annotations(entsql.Default("0")).
			Comment("Percent (0 to 100, at most 2 decimals) of a checkout's value it may lack and still be paid; a checkout copies it unless its request names its own."),
		field.Enum("late_payments").Values(LateCredit, LateRefund).Default(LateCredit).
			Comment("What becomes of a payment detected after its checkout expired: credit (forwarded as any other) or refund (credited, notified, held for a refund); a checkout copies it unless its request names its own."),
		field.Float("rate_limit").Default(0).
			Comment("Requests per second each of the project's keys may make; 0 takes the server's --key-rate."),
		field.Int("rate_burst").Default(0).NonNegative().
			Comment("Requests each of the project's keys may make at once; 0 takes the server's --key-burst."),
		field.String("brand_color").Default("").
			Comment("The hosted pages' accent colour (#rrggbb); empty is payhook's."),
		field.String("support_contact").Default("").
			Comment("An email address or https URL the hosted pages show payers for help; empty shows none."),
		field.Bytes("logo").Optional().Nillable().
			Comment("The project's logo as uploaded (PNG, JPEG or SVG, size-checked), served by payhook on its hosted pages."),
		field.String("logo_type").Default("").
			Comment("The logo's media type; empty when there is no logo."),
		field.Bool("auto_refund_overpaid").Default(false).
			Comment("A refund the payer asks for on the hosted page of an overpaid invoice is approved at once (other payer refunds wait for the merchant)."),
		field.Bool("require_owner_2fa").Default(false).
			Comment("The project's owners must sign in with a TOTP code: one without enrolls at their next sign-in."),
	}
}
