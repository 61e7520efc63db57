/*
 * Where a webhook may send (SSRF guard): an http or https URL without
 * credentials, whose host is, and resolves only to, public addresses. Refused
 * unless WEBHOOK_ALLOW_PRIVATE=1: unspecified (0.0.0.0/8, ::), loopback
 * (127/8, ::1), private (10/8, 172.16/12, 192.168/16), CGNAT (100.64/10),
 * link-local (169.254/16, fe80::/10), unique-local (fc00::/7), the IETF,
 * benchmark and reserved IPv4 ranges, multicast and broadcast, the
 * deprecated IPv6 ranges that reach inside a network (IPv4-compatible
 * ::/96, so `[::127.0.0.1]` and `[::7f00:1]`; site-local fec0::/10), and
 * the IPv6 forms that carry an IPv4 address: IPv4-mapped ::ffff:0:0/96 and
 * IPv4-translated ::ffff:0:0:0/96 as the IPv4 inside them, NAT64
 * (64:ff9b::/96, 64:ff9b:1::/48) whole (the translator reaches any IPv4),
 * and 6to4 (2002::/16) and Teredo (2001::/32: its server's IPv4, and its
 * client's stored with every bit inverted) when the IPv4 they carry is
 * refused. The URL parser has already turned numeric host forms (`0x7f.1`,
 * `2130706433`) into dotted IPv4.
 *
 * The API checks a URL when a webhook is written (its literal address, and
 * what its name resolves to then); the deliverer checks what the name
 * resolves to on each connection (webhooks/webhookPost.ts), so a name that
 * later resolves to a private address (DNS rebinding) is refused too.
 */
import dns from 'node:dns'
import { BlockList, isIP } from 'node:net'
import { wrongParameter } from './errors.js'

const FORBIDDEN = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  // IPv4-compatible (deprecated, RFC 4291), with the unspecified and loopback addresses.
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  // Site-local (deprecated, RFC 3879).
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6')
}

/** The eight 16-bit groups of an IPv6 address; null when the URL parser does not take it. */
function ipv6Groups(address: string): number[] | null {
  let canonical: string
  try {
    // The WHATWG form: lower case, hexadecimal groups only (a dotted IPv4 tail is turned into two), `::` at most once.
    canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1)
  } catch {
    return null
  }
  const [head = '', tail] = canonical.split('::')
  const parts = (text: string) => (text === '' ? [] : text.split(':').map((group) => parseInt(group, 16)))
  const left = parts(head)
  const right = tail === undefined ? [] : parts(tail)
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right]
}

function dottedIPv4(high: number, low: number): string {
  return [high >>> 8, high & 0xff, low >>> 8, low & 0xff].join('.')
}

/** The IPv4 addresses that a 6to4 or Teredo address carries (see the top); none for any other address. */
function carriedIPv4(address: string): string[] {
  const groups = ipv6Groups(address)
  if (groups === null) return []
  const [g0, g1, g2, g3, , , g6, g7] = groups as [number, number, number, number, number, number, number, number]
  if (g0 === 0x2002) return [dottedIPv4(g1, g2)]
  if (g0 === 0x2001 && g1 === 0) return [dottedIPv4(g2, g3), dottedIPv4(~g6 & 0xffff, ~g7 & 0xffff)]
  return []
}

/** Whether a literal IP address is one a webhook may not reach (see the top); false for what is no IP address. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  // BlockList matches an IPv4-mapped IPv6 address (::ffff:a.b.c.d) against the IPv4 rules.
  if (family === 4) return FORBIDDEN.check(address, 'ipv4')
  return FORBIDDEN.check(address, 'ipv6') || carriedIPv4(address).some((carried) => FORBIDDEN.check(carried, 'ipv4'))
}

/** The URL's host as an address or name, without an IPv6 literal's brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '')
}

/**
 * The webhook URL parsed, with what the API refuses (400 TL01-1105): not http(s), credentials in it, and — unless
 * `allowPrivate` — a literal forbidden address.
 */
export function webhookUrl(text: string, allowPrivate: boolean): URL {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw wrongParameter(`url: '${text}' is not a URL`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw wrongParameter(`url: a webhook is posted over http or https, not ${url.protocol.replace(/:$/, '')}`)
  if (url.username !== '' || url.password !== '') throw wrongParameter('url: a webhook URL may not carry credentials (user:password@); use the signature to authenticate the sender')
  if (!allowPrivate && isForbiddenAddress(hostOf(url))) throw wrongParameter(`url: ${hostOf(url)} is a private, loopback or otherwise internal address; webhooks are posted to public addresses only`)
  return url
}

/** The forbidden address a host name resolves to now, if any (a name that does not resolve: null, delivery retries). */
export async function forbiddenResolution(url: URL): Promise<string | null> {
  const host = hostOf(url)
  if (isIP(host) !== 0) return isForbiddenAddress(host) ? host : null
  let addresses: dns.LookupAddress[]
  try {
    addresses = await dns.promises.lookup(host, { all: true, verbatim: true })
  } catch {
    return null
  }
  return addresses.find((entry) => isForbiddenAddress(entry.address))?.address ?? null
}

/** webhookUrl, and the host's resolution checked as well (the API's check when a webhook is written). */
export async function checkWebhookUrl(text: string, allowPrivate: boolean): Promise<URL> {
  const url = webhookUrl(text, allowPrivate)
  if (allowPrivate) return url
  const forbidden = await forbiddenResolution(url)
  if (forbidden !== null) throw wrongParameter(`url: ${hostOf(url)} resolves to ${forbidden}, a private, loopback or otherwise internal address; webhooks are posted to public addresses only`)
  return url
}
