// Package ledger is payhook's journal of value: an append-only table of
// lines (ledger_entries), each a signed amount in a coin's base units on one
// account of one project and ticker. Every movement of value is an event
// whose lines sum to zero, written by the code that causes it, in the
// database transaction that records the change. A balance is the sum of an
// account's lines; nothing else is a balance.
//
// # Accounts
//
//	received     what payhook's addresses received (credited payments), negative: the source of all value
//	pending      credited, neither held nor planned out yet
//	held         kept on payhook's addresses for the merchant (a hold reason says why), until swept, paid out or refunded
//	outgoing     planned into an outgoing transaction (server/outbound) that is not sent yet
//	forwarded    sent to the merchant's wallets
//	fee          the service fee taken when forwarding
//	network_fee  the deduction for the network's fee when forwarding
//	loss         credited payments that left the chain after their credit (negative)
//	swept        swept from a held address towards the project's payout wallet (account chains), not credited there yet
//	payout       paid out to the destinations of payout requests
//	refund       the next money flow's
//	direct       received straight into the merchant's own wallet (a watch-only key): never payhook's
//	owed         service fees a watch-only key's payments owe the operator (negative), until settled
//	settled      service fees owed that the operator recorded as paid outside payhook (negative)
//
// # Events and their lines
//
//	credit    received -v, pending +v          a payment reaches its required confirmations
//	hold      pending -v, held +v              it is held (no wallet, below the minimum or dust, ...)
//	direct    pending -v, direct +v, fee +f, owed -f   it landed in the merchant's own wallet (an address of
//	                                           their watch-only key): nothing to forward; the service fee
//	                                           f is owed, not deducted
//	settle    owed +v, settled -v              the operator records v of the fees owed as paid (an invoice
//	                                           settled outside payhook; key settle:<project>:<reference>)
//	release   held -v, pending +v              a held payment is forwarded after all (with its address's next ones)
//	plan      pending -v, outgoing +v          it is planned into an outgoing transaction
//	send      outgoing -v, forwarded +f, fee +s, network_fee +n (f+s+n = v)   that transaction is sent
//	unplan    outgoing -v, pending +v          the transaction can never be sent as planned
//	bounce    forwarded -f, held +f            the sent transaction failed in its block (EVM, TRON): the
//	                                           forwarded part never left; the fee and the network fee stay
//	                                           as journaled (the fee is on the address, the network was paid)
//	reversal  received +v, loss -v             the payment left the chain after its credit
//	restore   received -v, loss +v             and came back
//	payout    held -v, outgoing +v             (payout-plan) a held payment is spent by a payout's
//	                                           transaction, when the payout is queued
//	payout    outgoing -v, held +v             (payout-unplan) that transaction can never be sent
//	payout    outgoing -s, payout +p, fee +f, network_fee +n, received +c   (payout-send) it was
//	                                           sent: s spent, p paid out, f the operator's payout fee,
//	                                           n the network's, c the change back to the payout
//	                                           wallet, credited again (received -c) as a payment of
//	                                           the wallet once confirmed
//	payout    direct -(p+n), payout +p, network_fee +n, fee +f, owed -f   (payout-psbt) a payout
//	                                           from the merchant's own wallet, signed by them, was sent;
//	                                           the operator's fee f is owed
//	payout    payout -p, fee -f, held +(p+f)   (payout-bounce) a sent payout transaction failed in its block
//	                                           (EVM, TRON): nothing left the wallet; the network fee stays
//	sweep     held -v, outgoing +v             (sweep-plan) a held payment is planned into a sweep to the
//	                                           payout wallet (account chains: a payout spends one account)
//	sweep     outgoing -v, held +v             (sweep-unplan) that transaction can never be sent
//	sweep     outgoing -s, swept +(s-n), network_fee +n   (sweep-send) it was sent
//	sweep     received +v, swept -v            (sweep-arrive) the wallet's payment of it is credited
//	                                           (received -v by its credit): it was the project's already
//	sweep     swept -v, held +v                (sweep-bounce) it failed in its block: v never left
//
// Every event has a key (credit:<payment>, plan:<payment>:<outbound>,
// bounce:<payment>:<outbound>,
// reversal:<payment>:<n>, ...);
// (key, account) is unique, so an event cannot be journaled twice: a second
// write fails with a constraint error, and the transaction that tried rolls
// back.
//
// # What the balances prove
//
// The lines of every event sum to zero, so the accounts always sum to zero.
// What payhook's addresses hold on chain is pending + held + outgoing + loss,
// plus what a forward leaves on the payment address: nothing on UTXO chains
// (the transaction spends its inputs whole, the service fee going to the
// operator's change address); the service fee of a native coin on account
// chains (EVM, TRON, Solana), whose forward pays the network from the
// address; the service fee and the network-fee deduction of a token, whose
// network fee is paid in the native coin. server/payment's property test
// checks this against the devnet's balances after random payments,
// reorganisations, forwards and failures.
package ledger
