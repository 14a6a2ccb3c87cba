// Checks payhook's merchant webhook signatures with the standardwebhooks npm
// package (exact version in package.json), unmodified. receiver's
// TestStandardWebhooksLibrary runs it:
//
//	node webhook_vectors.test.cjs [path/to/webhook_vectors.json]
//
// 1. Verify: for every vector of receiver/testdata/webhook_vectors.json, the
//    x-service-* headers are renamed webhook-* and the library's
//    Webhook.verify decides; it must agree with the vector's "valid". The
//    library checks the timestamp against Date.now() with its own 5-minute
//    tolerance, so Date.now is set to the vector's verify_at while it runs.
//    Prints "ok verify <description>" or "FAIL verify <description>: <why>".
// 2. Sign: the library signs every valid vector's id, timestamp and signed
//    data with the vector's secret, and one new message with a new random
//    secret at the current time; each is printed as one line
//    "signed <JSON {secret, id, timestamp, signed_data, signature}>" for the
//    Go test to verify with payhook's receiver.
//
// Exits non-zero when any check failed.
'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { Webhook, WebhookVerificationError } = require('standardwebhooks')

const file = process.argv[2] || path.join(__dirname, '..', '..', 'receiver', 'testdata', 'webhook_vectors.json')
const { vectors } = JSON.parse(fs.readFileSync(file, 'utf8'))
if (!Array.isArray(vectors) || vectors.length === 0) {
  console.error(`no vectors in ${file}`)
  process.exit(2)
}

// renamed maps payhook's header names to Standard Webhooks' ones.
function renamed (headers) {
  const out = {}
  for (const [name, value] of Object.entries(headers)) {
    out[name.replace(/^x-service-/, 'webhook-')] = value
  }
  return out
}

const realNow = Date.now
let failed = 0

for (const v of vectors) {
  let accepted = false
  let refusal = ''
  Date.now = () => v.verify_at * 1000
  try {
    // jsonParse: false, as a GET's signed data is a URL and a form body is
    // not JSON; verify still throws on any mismatch.
    new Webhook(v.secret).verify(v.signed_data, renamed(v.headers), { jsonParse: false })
    accepted = true
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) {
      failed++
      console.log(`FAIL verify ${v.description}: unexpected error ${err && err.stack}`)
      continue
    }
    refusal = err.message
  } finally {
    Date.now = realNow
  }
  if (accepted === v.valid) {
    console.log(`ok verify ${v.description}`)
  } else {
    failed++
    console.log(`FAIL verify ${v.description}: library ${accepted ? 'accepted' : 'refused (' + refusal + ')'}, vector says valid=${v.valid}`)
  }
}

function emit (secret, id, timestamp, signedData) {
  const signature = new Webhook(secret).sign(id, new Date(timestamp * 1000), signedData)
  console.log('signed ' + JSON.stringify({ secret, id, timestamp, signed_data: signedData, signature }))
}

for (const v of vectors) {
  if (v.valid) {
    emit(v.secret, v.headers['x-service-id'], Number(v.headers['x-service-timestamp']), v.signed_data)
  }
}
emit('whsec_' + crypto.randomBytes(32).toString('base64'), crypto.randomUUID(), Math.floor(realNow() / 1000),
  JSON.stringify({ uuid: crypto.randomUUID(), payment_status: 'confirmed', note: 'café ✓', value_coin: '0.0015' }))

if (failed > 0) {
  console.error(`${failed} vector(s) failed`)
  process.exit(1)
}
