// Calls every function of this API family's public npm SDKs, @cryptapi/api
// and @blockbee/api (exact versions in package.json), unmodified, against a
// payhook server, and checks each result. server/sdk_test.go starts the
// server (SQLite, --dev devnet, manual delivery) and runs this script:
//
//	PAYHOOK_URL=http://127.0.0.1:PORT PAYHOOK_KEY=ph_... node sdk.test.cjs
//
// The SDKs hard-code their base URL and call the global fetch, so fetch is
// replaced by one that sends their requests to PAYHOOK_URL instead. The
// CryptAPI SDK has no API key parameter: the replacement adds the apikey
// header, as a merchant's own fetch wrapper would. The BlockBee SDK sends the
// key in the query, and the replacement leaves its request alone.
//
// Prints "ok <function>" or "FAIL <function>: <why>" per function and exits
// non-zero when any failed.
'use strict'

const assert = require('node:assert/strict')
const CryptAPI = require('@cryptapi/api')
const BlockBee = require('@blockbee/api')

const BASE = process.env.PAYHOOK_URL
const KEY = process.env.PAYHOOK_KEY
const BTC_USD = process.env.PAYHOOK_BTC_USD
if (!BASE || !KEY || !BTC_USD) {
  console.error('set PAYHOOK_URL, PAYHOOK_KEY and PAYHOOK_BTC_USD (server/sdk_test.go does)')
  process.exit(2)
}

// Known-valid mainnet destination addresses.
const BTC_DEST = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu'
const TRX_DEST = 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH'
const TRC20_USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'

const realFetch = globalThis.fetch
const hosts = { 'api.cryptapi.io': 'cryptapi', 'api.blockbee.io': 'blockbee' }
const calls = []
const pending = new Set()

globalThis.fetch = (input, init = {}) => {
  const u = new URL(String(input))
  const sdk = hosts[u.host]
  if (!sdk || u.protocol !== 'https:') {
    return Promise.reject(new Error(`SDK requested an unexpected origin: ${u.origin}`))
  }
  const headers = { ...(init.headers || {}) }
  if (sdk === 'cryptapi') {
    headers.apikey = KEY
  }
  calls.push({ sdk, path: u.pathname, query: new URLSearchParams(u.search), headers })
  const p = realFetch(new URL(u.pathname + u.search, BASE), { ...init, headers })
  pending.add(p)
  p.then(() => pending.delete(p), () => pending.delete(p))
  return p
}

let unhandled = []
process.on('unhandledRejection', (err) => unhandled.push(err))

// settle waits for requests an SDK started without returning them (the
// constructors check the coin in the background).
async function settle () {
  while (pending.size > 0) {
    await Promise.allSettled([...pending])
  }
  await new Promise((resolve) => setImmediate(resolve))
}

const results = []
async function check (name, fn) {
  try {
    await fn()
    await settle()
    if (unhandled.length > 0) {
      const errs = unhandled
      unhandled = []
      throw new Error('unhandled rejection: ' + errs.map(String).join('; '))
    }
    results.push(name)
    console.log(`ok ${name}`)
  } catch (err) {
    console.log(`FAIL ${name}: ${err && err.stack ? err.stack : err}`)
    process.exitCode = 1
  }
}

function lastCall (sdk, suffix) {
  const c = calls.filter((x) => x.sdk === sdk && x.path.endsWith(suffix)).at(-1)
  assert.ok(c, `no ${sdk} request to ...${suffix}`)
  return c
}

// devnet pays address on the simulated chain and mines a block; with manual
// delivery the server has applied the block when the call returns.
async function devnetPay (ticker, address, value) {
  for (const [op, body] of [['pay', { address_in: address, value_coin: value }], ['mine', { blocks: 1 }]]) {
    const r = await realFetch(`${BASE}/devnet/${ticker}/${op}/`, { method: 'POST', body: JSON.stringify(body) })
    assert.equal(r.status, 200, `devnet ${op}: ${await r.text()}`)
  }
}

function assertPNG (b64, minSize) {
  const png = Buffer.from(b64, 'base64')
  assert.equal(png.subarray(0, 8).toString('hex'), '89504e470d0a1a0a', 'qr_code is not a PNG')
  const width = png.readUInt32BE(16)
  const height = png.readUInt32BE(20)
  assert.equal(width, height)
  assert.ok(width >= minSize, `PNG is ${width}px, asked ${minSize}`)
}

function assertInfo (info) {
  assert.equal(info.status, undefined, '/info/ has no status member')
  assert.equal(info.btc.ticker, 'btc')
  assert.equal(info.btc.decimals, 8)
  assert.equal(info.trc20.usdt.ticker, 'usdt')
  assert.equal(info.trc20.usdt.contract, TRC20_USDT)
  assert.equal(info.sol.sol.ticker, 'sol')
}

async function assertSupported (coins, getInfo) {
  for (const k of ['btc', 'bch', 'ltc', 'doge', 'eth', 'trx', 'erc20_usdt', 'trc20_usdt', 'bep20_usdt', 'polygon_pol', 'sol_sol', 'sol_usdc']) {
    assert.ok(Object.hasOwn(coins, k), `getSupportedCoins lacks ${k}: ${Object.keys(coins)}`)
  }
  assert.ok(!Object.hasOwn(coins, 'fee_tiers'))
  // Every key it lists is a ticker the SDK can use in a path.
  for (const [k, v] of Object.entries(coins)) {
    const one = await getInfo(k)
    assert.equal(one.status, 'success', k)
    assert.equal(one.ticker, v.ticker, k)
    assert.equal(one.ticker_path, v.ticker_path, k)
  }
}

// The expected estimate: the registry's fee estimate for btc, 0.00002, in
// USD at the price table's rate, rounded to cents.
function btcEstimateUSD () {
  return (0.00002 * Number(BTC_USD)).toFixed(2)
}

async function runCryptAPI () {
  const cb = 'https://shop.example/cryptapi'
  let ca
  let addressIn
  await check('CryptAPI.getInfo', async () => {
    assertInfo(await CryptAPI.getInfo())
    const c = lastCall('cryptapi', '/info/')
    assert.equal(c.path, '/info/')
    const btc = await CryptAPI.getInfo('btc')
    assert.equal(btc.status, 'success')
    assert.equal(btc.ticker, 'btc')
    const usdt = await CryptAPI.getInfo('trc20_usdt')
    assert.equal(usdt.ticker_path, 'trc20/usdt')
    assert.equal(lastCall('cryptapi', '/info/').path, '/trc20/usdt/info/')
  })
  await check('CryptAPI.getSupportedCoins', async () => {
    await assertSupported(await CryptAPI.getSupportedCoins(), (k) => CryptAPI.getInfo(k))
  })
  await check('new CryptAPI', async () => {
    ca = new CryptAPI('btc', BTC_DEST, cb, { order: '42' }, { json: 1, convert: 1 })
    await settle() // its coin check ran and found btc (an unknown coin rejects)
    assert.equal(ca.coin, 'btc')
  })
  await check('CryptAPI.getAddress', async () => {
    addressIn = await ca.getAddress()
    assert.match(addressIn, /^bc1q[02-9ac-hj-np-z]{38}$/)
    assert.notEqual(addressIn, BTC_DEST)
    assert.equal(await ca.getAddress(), addressIn, 'same callback, same address')
    const c = lastCall('cryptapi', '/btc/create/')
    assert.equal(c.query.get('callback'), cb + '?order=42')
    const usdt = new CryptAPI('trc20_usdt', TRX_DEST, cb, {}, {})
    assert.match(await usdt.getAddress(), /^T[1-9A-HJ-NP-Za-km-z]{33}$/)
  })
  await check('CryptAPI.checkLogs', async () => {
    const empty = await ca.checkLogs()
    assert.equal(empty.status, 'success')
    assert.equal(empty.address_in, addressIn)
    assert.deepEqual(empty.callbacks, [])
    await devnetPay('btc', addressIn, '0.01')
    const logs = await ca.checkLogs()
    assert.equal(logs.callback_url, cb + '?order=42')
    assert.deepEqual(logs.address_out, { [BTC_DEST]: 1 })
    assert.equal(logs.callbacks.length, 1)
    assert.equal(logs.callbacks[0].value_coin, '0.01')
    assert.ok(['confirmed', 'completed'].includes(logs.callbacks[0].payment_status), logs.callbacks[0].payment_status)
    assert.ok(logs.callbacks[0].deliveries.length >= 1, 'a callback was stored')
  })
  await check('CryptAPI.getQrcode', async () => {
    const qr = await ca.getQrcode('0.01', 256)
    assert.equal(qr.status, 'success')
    assert.equal(qr.payment_uri, `bitcoin:${addressIn}?amount=0.01`)
    assertPNG(qr.qr_code, 256)
    const plain = await ca.getQrcode()
    assert.equal(plain.payment_uri, `bitcoin:${addressIn}`)
    assertPNG(plain.qr_code, 512) // the SDK's default size
    await assert.rejects(ca.getQrcode('0.000000001'), /value: .*more than 8 decimal places/)
  })
  await check('CryptAPI.getEstimate', async () => {
    const est = await CryptAPI.getEstimate('btc')
    assert.equal(est.status, 'success')
    assert.equal(est.estimated_cost, '0.00002')
    assert.equal(est.estimated_cost_currency.USD, btcEstimateUSD())
    assert.equal(typeof est.estimated_cost_currency.EUR, 'string')
    const usdt = await CryptAPI.getEstimate('trc20_usdt', 2, 'fast')
    assert.equal(usdt.estimated_cost, '3')
    assert.equal(usdt.estimated_cost_currency.USD, '3.00')
    await assert.rejects(CryptAPI.getEstimate('btc', 1, 'warp'), /priority: must be one of fast, default, economic/)
  })
  await check('CryptAPI.getConvert', async () => {
    const c = await CryptAPI.getConvert('btc', '214', 'USD')
    assert.equal(c.status, 'success')
    assert.equal(c.exchange_rate, BTC_USD)
    assert.equal(Number(c.value_coin), 214 / Number(BTC_USD))
    const same = await CryptAPI.getConvert('trc20_usdt', '1.5', 'usdt')
    assert.equal(same.value_coin, '1.5')
    assert.equal(same.exchange_rate, '1')
    await assert.rejects(CryptAPI.getConvert('btc', '1', 'XYZ'), /from: "XYZ" is neither/)
  })
}

async function runBlockBee () {
  const cb = 'https://shop.example/blockbee'
  let bb
  let addressIn
  const keyInQuery = (suffix) => {
    const c = lastCall('blockbee', suffix)
    assert.equal(c.query.get('apikey'), KEY, 'the BlockBee SDK sends its key in the query')
    assert.equal(c.headers.apikey, undefined)
  }
  await check('BlockBee.getInfo', async () => {
    assertInfo(await BlockBee.getInfo(null, true, KEY))
    keyInQuery('/info/')
    const btc = await BlockBee.getInfo('btc', false, KEY)
    assert.equal(btc.ticker, 'btc')
    assert.equal(btc.minimum_transaction_coin, '0.0001')
  })
  await check('BlockBee.getSupportedCoins', async () => {
    await assertSupported(await BlockBee.getSupportedCoins(KEY), (k) => BlockBee.getInfo(k, false, KEY))
  })
  await check('new BlockBee', async () => {
    // No own address: the spec's minimal create (callback alone); payhook
    // holds the funds on address_in.
    bb = new BlockBee('trc20_usdt', '', cb, { order: '7' }, { post: 1 }, KEY)
    await settle()
    assert.equal(bb.apiKey, KEY)
  })
  await check('BlockBee.getAddress', async () => {
    addressIn = await bb.getAddress()
    assert.match(addressIn, /^T[1-9A-HJ-NP-Za-km-z]{33}$/)
    keyInQuery('/trc20/usdt/create/')
    assert.equal(lastCall('blockbee', '/trc20/usdt/create/').query.get('address'), null, 'created without an address')
    assert.equal(await bb.getAddress(), addressIn)
  })
  await check('BlockBee.checkLogs', async () => {
    await devnetPay('trc20/usdt', addressIn, '12.5')
    const logs = await bb.checkLogs()
    keyInQuery('/trc20/usdt/logs/')
    assert.equal(logs.status, 'success')
    assert.equal(logs.address_in, addressIn)
    assert.deepEqual(logs.address_out, {}, 'no forwarding address: the funds are held')
    assert.equal(logs.callback_url, cb + '?order=7')
    assert.equal(logs.callbacks.length, 1)
    assert.equal(logs.callbacks[0].value_coin, '12.5')
  })
  await check('BlockBee.getQrcode', async () => {
    const qr = await bb.getQrcode('12.5', 300)
    keyInQuery('/trc20/usdt/qrcode/')
    assert.equal(qr.payment_uri, `tron:${addressIn}?amount=12.5&token=${TRC20_USDT}`)
    assertPNG(qr.qr_code, 300)
    assert.equal(await bb.getQrcode('1', 4096), null, 'size outside 64..1024 is an error')
  })
  await check('BlockBee.getEstimate', async () => {
    const est = await BlockBee.getEstimate('btc', KEY)
    keyInQuery('/btc/estimate/')
    assert.equal(est.estimated_cost, '0.00002')
    assert.equal(est.estimated_cost_currency.USD, btcEstimateUSD())
    assert.equal(await BlockBee.getEstimate('btc', KEY, 21), null, 'more than 20 addresses is an error')
  })
  await check('BlockBee.getConvert', async () => {
    const c = await BlockBee.getConvert('trc20_usdt', '0.001', 'btc', KEY)
    keyInQuery('/trc20/usdt/convert/')
    assert.equal(c.exchange_rate, (1 / Number(BTC_USD)).toFixed(18).replace(/0+$/, ''))
    assert.equal(c.value_coin, String(0.001 * Number(BTC_USD)))
    assert.equal(await BlockBee.getConvert('btc', '-1', 'usd', KEY), null, 'a negative value is an error')
  })
  await check('BlockBee.createPayout', async () => {
    const p = await BlockBee.createPayout('btc', BTC_DEST, '0.001', KEY)
    keyInQuery('/btc/payout/')
    assert.ok(p, 'createPayout answered an error')
    assert.equal(p.status, 'success')
    assert.equal(await BlockBee.createPayout('btc', 'not-an-address', '0.001', KEY), null)
  })
}

async function main () {
  await runCryptAPI()
  await runBlockBee()
  console.log(`${results.length} functions passed`)
}

main().catch((err) => {
  console.log(`FAIL harness: ${err && err.stack ? err.stack : err}`)
  process.exitCode = 1
})
