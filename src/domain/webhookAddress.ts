/*
 * Where a webhook may send (SSRF guard): an http or https URL without
 * credentials, whose host is, and resolves only to, public addresses. Refused
 * unless WEBHOOK_ALLOW_PRIVATE=1: unspecified (0.0.0.0/8, ::), loopback
 * (127/8, ::1), private (10/8, 172.16/12, 192.168/16), CGNAT (100.64/10),
 * link-local (169.254/16, fe80::/10), unique-local (fc00::/7), the IETF,
 * benchmark and reserved IPv4 ranges, multicast and broadcast, and the
 * IPv6 forms that carry such an IPv4 address (IPv4-mapped ::ffff:0:0/96,
 * NAT64 64:ff9b::/96). The URL parser has already turned numeric host forms
 * (`0x7f.1`, `2130706433`) into dotted IPv4.
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
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6')
}

/** Whether a literal IP address is one a webhook may not reach (see the top); false for what is no IP address. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  // BlockList matches an IPv4-mapped IPv6 address (::ffff:a.b.c.d) against the IPv4 rules.
  return FORBIDDEN.check(address, family === 4 ? 'ipv4' : 'ipv6')
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
