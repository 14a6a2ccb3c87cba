package eventtype

// Event is one event type of the catalogue.
type Event struct {
	// Name is the event type (checkout.payment.confirmed): the payload's
	// event_type where it has one, and always the x-service-event header.
	Name string
	// Stage is the last part of Name (confirmed).
	Stage string
	// Description says in one sentence when it is sent.
	Description string
	// Services are the services that send it, as notifications name them
	// (checkout, deposit, subscription, address, payout, notification).
	Services []string
	// Fields are the fields its payload can carry, in wire order.
	Fields []Field
	// CustomParams is true when the merchant's custom parameters (cb_params)
	// follow the fields, as strings.
	CustomParams bool
}

// family is event types of one payload shape, one per stage.
type family struct {
	prefix   string // the name before the stage ("checkout.payment."); "" for a single event type
	stages   []stage
	services []string
	fields   []Def
	custom   bool
}

// stage is one event type of a family: its last name part and what it
// says, completing the family's sentence.
type stage struct{ name, says string }

// paymentStages completes "A payment to a checkout ...".
var paymentStages = []stage{
	{StagePending, "was seen and awaits its required confirmations; sent again as its confirmations grow"},
	{StageConfirmed, "reached its required confirmations and is credited"},
	{StageCompleted, "was forwarded to the merchant's wallets (or is held when there is no wallet to forward to)"},
}

// refundStages completes "A refund of a checkout's payment ...".
var refundStages = []stage{
	{StageRequested, "was asked for by the payer on the hosted page and waits for the merchant's approval"},
	{StageRefundPending, "was approved; its payout is under way"},
	{StageRefundCompleted, "was sent: its payout is done"},
	{StageRefundFailed, "failed: its payout could not be sent"},
}

func families() []family {
	return []family{
		{prefix: "checkout.payment.", stages: stagesOf("A payment to a checkout", paymentStages), services: []string{"checkout"}, fields: invoiceFields(true)},
		{prefix: "deposit.payment.", stages: stagesOf("A payment to a deposit", paymentStages), services: []string{"deposit"}, fields: invoiceFields(false)},
		{prefix: "subscription.payment.", stages: stagesOf("A payment of a subscription's renewal", paymentStages), services: []string{"subscription"}, fields: subscriptionFields()},
		{prefix: "custom.payment.", stages: stagesOf("A payment to a low-level address (the callback)", paymentStages), services: []string{"address"}, fields: CallbackFields(), custom: true},
		{stages: []stage{{"wrong_asset", "A payment of another asset than its address takes arrived and is credited; it is held until the merchant forwards or refunds it (POST /wrong_asset/forward/, /wrong_asset/refund/)."}},
			services: []string{"address", "checkout", "deposit", "subscription"}, fields: wrongAssetFields(), custom: true},
		{prefix: "checkout.refund.", stages: stagesOf("A refund of a checkout's payment", refundStages), services: []string{"checkout"}, fields: refundFields()},
		{prefix: "deposit.refund.", stages: stagesOf("A refund of a deposit's payment", refundStages), services: []string{"deposit"}, fields: refundFields()},
		{prefix: "payout.", stages: []stage{
			{StageDone, "A payout was sent (to the project's payout_notify_url)."},
			{StageError, "A payout failed and nothing was paid; its requests are rejected (to the project's payout_notify_url)."},
		}, services: []string{"payout"}, fields: payoutFields()},
		{stages: []stage{{"test.webhook", "A test the merchant asked for (POST /notification/test/, the dashboard), to check an endpoint and its signature checks."}},
			services: []string{"notification"}, fields: testFields()},
	}
}

// stagesOf gives each stage the sentence subject + its says.
func stagesOf(subject string, ss []stage) []stage {
	out := make([]stage, len(ss))
	for i, s := range ss {
		out[i] = stage{s.name, subject + " " + s.says + "."}
	}
	return out
}

// All returns every event type payhook sends, in a fixed order: the
// payment webhooks (checkout, deposit, subscription), the low-level
// callbacks, wrong_asset, the refunds, the payouts and test.webhook. The
// result is the caller's.
func All() []Event {
	var out []Event
	for _, f := range families() {
		for _, s := range f.stages {
			e := Event{Name: f.prefix + s.name, Stage: s.name, Description: s.says, Services: append([]string(nil), f.services...), CustomParams: f.custom}
			for _, d := range f.fields {
				if fd := d.Spec(); fd.inStage(s.name) {
					e.Fields = append(e.Fields, fd)
				}
			}
			out = append(out, e)
		}
	}
	return out
}

// Names returns the name of every event type, in All's order.
func Names() []string {
	all := All()
	out := make([]string, len(all))
	for i, e := range all {
		out[i] = e.Name
	}
	return out
}

// Lookup returns the event type name; an unknown name is an error
// wrapping ErrUnknown.
func Lookup(name string) (Event, error) {
	for _, e := range All() {
		if e.Name == name {
			return e, nil
		}
	}
	return Event{}, Unknown(name)
}

// Field returns the definition of the field name of e, and whether e's
// payloads carry one.
func (e Event) Field(name string) (Field, bool) {
	for _, f := range e.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}
