// Package export writes a project's accounting export: the journal's lines
// (server/ledger) of one date range, one row each, as CSV or JSON, streamed
// page by page so that a year of payments never sits in memory.
//
// # Rows
//
// A row is one ledger line on an account where value crosses the edge of
// what payhook keeps for the project: received, forwarded, fee,
// network_fee and payout; direct and owed for a project's watch-only keys.
// Lines on the accounts inside payhook's custody
// (pending, held, outgoing, swept, loss) only move value between its own
// balances and are not rows. The row's amount is the line negated and in
// coin units: what the project's balance at payhook moved by (a payment is
// positive, a forward, a fee, a network fee, a payout or a refund
// negative; a bounce or a reorganisation is the opposite sign of what it
// undoes). The rows of a coin therefore sum to what payhook holds for the
// project in that coin, counted from the first row exported.
//
// Its kind comes from the line's event and account (KindOf):
//
//	payment      received, credit         a payment reached its confirmations
//	reversal     received, reversal/restore   a credited payment left the chain (or came back)
//	change       received, payout         a payout's change back to the payout wallet; the wallet's
//	                                      credit of it is a payment: the two cancel
//	sweep        received, sweep          a sweep arrived at the payout wallet; the wallet's credit
//	                                      of it is a payment: the two cancel
//	forward      forwarded                sent to the merchant's wallet (a bounce returns it)
//	fee          fee                      the service fee of a forward, the operator's fee of a payout
//	network_fee  network_fee              the network's fee of a forward, payout or sweep
//	payout       payout                   paid to a payout request's destination
//	refund       payout                   the same, for the payout of a refund
//	direct       direct                   a payment to the merchant's own key (watch-only): it is in
//	                                      their wallet, so it leaves the balance at payhook at once
//	fee_owed     owed                     that payment's service fee, owed instead of deducted: the
//	                                      fee row takes it off the balance, this row puts it back
//
// # References and fiat
//
// txid is the outgoing transaction's for lines of one (forward, payout,
// sweep), else the payment's incoming transaction. invoice_id is the
// public id of the invoice whose address received the payment (or whose
// payment a refund returns); payout_id is the payout's id; refund_id the
// refund's.
//
// fiat_value is the amount valued at the time, with fiat_currency and
// fiat_source: "payment" when the line is about a payment payhook valued
// when it detected it (an invoice's payment: its value_fiat, at the
// checkout's held rate or the live price of that moment, in the invoice's
// currency); else "price:<providers>" when the stored price of the coin
// (price_quotes keeps the last one of each coin) was fetched within
// Config.MaxPriceAge of the line's time, in the project's currency; else
// the three columns are empty: payhook keeps no price history, so an older
// line has no value it could vouch for.
//
// # Guarantees and failure modes
//
// Lines are read in id order (journal order: rows are in entry_id order)
// in pages of Config.PageSize (keyset: each query starts after the last id
// read), each page's references in one query per table; memory is bounded
// by a page whatever the range. The journal is never pruned, so the reads
// are bounded by the range, not by the journal: one query finds the first
// and last ids of the project's lines dated in the range (the
// (project_id, created_at, id) index), and the pages read the project's
// lines between the two ((project_id, id) index), keeping those dated in
// the range (a line dated outside it lies between the two only when the
// journal's clocks disagreed with its ids). Each
// page is written before the next is read, so a slow client holds no
// database transaction open. A line journaled during an export with a time
// inside the range may be missed or included: export closed periods. An
// error while reading ends the export after the rows already written (the
// caller's transport says the stream failed).
package export
