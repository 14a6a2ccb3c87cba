// Verifies endpoint deliveries with the standardwebhooks npm package (exact
// version in package.json), unmodified, as a merchant's receiver would: the
// headers as they arrived (webhook-id, webhook-timestamp,
// webhook-signature), no renaming. server's TestEndpoints runs it:
//
//	node verify_delivery.cjs < deliveries.json
//
// stdin is a JSON array of {secret, headers, body, now}; now (Unix seconds)
// is the receiver's clock, which the library checks the timestamp against
// with its own 5-minute tolerance (the tests run on a controlled clock), so
// Date.now is set to it while each is verified. For each, prints
// "ok <webhook-id> <type>" when Webhook.verify accepts it (type is the
// verified payload's), or "FAIL <webhook-id>: <why>". Exits non-zero when
// any failed.
'use strict'

const fs = require('node:fs')
const { Webhook } = require('standardwebhooks')

const deliveries = JSON.parse(fs.readFileSync(0, 'utf8'))
let failed = false
for (const d of deliveries) {
  const id = d.headers['webhook-id']
  const realNow = Date.now
  if (d.now) {
    Date.now = () => d.now * 1000
  }
  try {
    const payload = new Webhook(d.secret).verify(d.body, d.headers)
    console.log(`ok ${id} ${payload.type}`)
  } catch (e) {
    failed = true
    console.log(`FAIL ${id}: ${e.message}`)
  } finally {
    Date.now = realNow
  }
}
process.exit(failed ? 1 : 0)
