/*
 * The interactive reference and the entry page, outside /v1:
 *
 *   GET /                      where to start: JSON (HTML for a browser) naming /docs and /v1/openapi.json
 *   GET /docs                  Swagger UI on /v1/openapi.json, "try it" against this server
 *   GET /docs/assets/<file>    Swagger UI's own files, from the swagger-ui-dist package
 *
 * Nothing is loaded from the internet: the page, its script and its styles
 * come from the package installed with the service (read on first use and
 * kept), the initializer is ours (no inline script), and Swagger UI's
 * online validator badge is off. The page opens on the description's
 * outline and loads a tag's operations when the tag is opened (INITIALIZER
 * below), so its first screen comes at once however large the description
 * is. Served on the public address and on every
 * tenant's: opened on a tenant's address (`http://acme.localhost:8080/docs`)
 * the document's first server is that tenant's `/v1`, so "try it" calls
 * the tenant from its own origin; opened on the public address, it is
 * `/tenant/{tenant}/v1` (http/tenantAddress.ts) with the tenant's name in
 * a field, so "try it" calls that tenant through the public address; the Authorize button takes the token
 * (query `token` or Bearer) or the API key and Basic credentials of login.
 * HEAD is answered like GET (answerWriter.ts writes no body for it).
 *
 * The two pages carry a Content-Security-Policy that allows exactly that:
 * scripts, styles and fonts from this origin only (and the logo's inline
 * style by its hash; Swagger UI's own images are data: URLs), calls ("try it", the document) to this origin only, no
 * plugin, no <base>, no form posted anywhere, and — with `frame-ancestors
 * 'none'` and `X-Frame-Options: DENY` for browsers that know only the
 * older header — no other site may frame them (clickjacking the Authorize
 * dialog). A script injected into the page could neither run inline nor
 * send the token elsewhere.
 */
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { ApiResponse } from '../response.js'

/** The files of swagger-ui-dist the page uses, with their content types. */
const ASSETS: ReadonlyMap<string, string> = new Map([
  ['swagger-ui.css', 'text/css; charset=utf-8'],
  ['swagger-ui-bundle.js', 'text/javascript; charset=utf-8'],
  ['favicon-32x32.png', 'image/png'],
  ['favicon-16x16.png', 'image/png'],
])

const DOCUMENT_PATH = '/v1/openapi.json'
const DOCS_PATH = '/docs'
const ASSETS_PREFIX = '/docs/assets/'

/** Where swagger-ui-dist is installed. */
function packageDir(): string {
  return path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
}

const assetBodies = new Map<string, Buffer>()

function assetBody(name: string): Buffer {
  let body = assetBodies.get(name)
  if (body === undefined) {
    body = fs.readFileSync(path.join(packageDir(), name))
    assetBodies.set(name, body)
  }
  return body
}

/**
 * Our initializer: Swagger UI on the service's document, "try it" open, the token kept across reloads of the page.
 * The page starts from the outline (`?tags=`: every tag, no operation; openapi/documentParts.ts), so its first
 * screen does not wait for the whole document (over a megabyte, seconds of Swagger UI's work); a tag's operations
 * are loaded when the tag is opened (by a click, or a deep link to it: both show it through the layout's `show`
 * action, which the LazyTags plugin wraps) and merged into the document shown. The initializer fetches the outline
 * itself and keeps the document shown (`shown`), so that a part merged in is never lost to a load of the outline
 * that comes after it (a deep link opens its tag while the page starts). The base layout, without the standalone
 * preset's top bar (a box to load another document's URL), spares its script: a second less of a first screen on
 * a loaded machine.
 */
const INITIALIZER = `window.addEventListener('load', function () {
  var documentUrl = '${DOCUMENT_PATH}'
  var shown = null
  var requested = {}
  function fetchDocument(query) {
    return fetch(documentUrl + query).then(function (answer) {
      if (!answer.ok) throw new Error(documentUrl + query + ' answered ' + answer.status)
      return answer.text()
    })
  }
  // The server chosen and its variables typed in (the tenant of /tenant/{tenant}/v1) outlive a part merged in.
  function keepingServer(update) {
    var server = window.ui.oas3Selectors.selectedServer()
    var values = server ? window.ui.oas3Selectors.serverVariables({ server: server }).toJS() : {}
    update()
    if (!server) return
    // After the page has rendered the new document: its server list, seen as changed, sets the variables' defaults.
    setTimeout(function () {
      window.ui.oas3Actions.setSelectedServer(server)
      Object.keys(values).forEach(function (key) {
        window.ui.oas3Actions.setServerVariableValue({ server: server, key: key, val: values[key] })
      })
    })
  }
  function loadTag(tag) {
    if (requested[tag]) return
    requested[tag] = true
    fetchDocument('?tags=' + encodeURIComponent(tag))
      .then(function (text) {
        var part = JSON.parse(text)
        Object.assign(shown.paths, part.paths)
        Object.keys(part.components || {}).forEach(function (kind) {
          shown.components[kind] = Object.assign({}, shown.components[kind], part.components[kind])
        })
        keepingServer(function () {
          window.ui.specActions.updateSpec(JSON.stringify(shown))
        })
      })
      .catch(function (error) {
        requested[tag] = false
        console.error('the operations of ' + tag + ' could not be loaded:', error)
      })
  }
  function LazyTags() {
    return {
      statePlugins: {
        layout: {
          wrapActions: {
            show: function (original) {
              return function (thing, isShown) {
                var key = [].concat(thing && thing.toArray ? thing.toArray() : thing)
                if (isShown && shown !== null && key[0] === 'operations-tag' && typeof key[1] === 'string') loadTag(key[1])
                return original(thing, isShown)
              }
            }
          }
        }
      }
    }
  }
  fetchDocument('?tags=').then(function (text) {
    shown = JSON.parse(text)
    shown.components = shown.components || {}
    window.ui = SwaggerUIBundle({
      spec: JSON.parse(text),
      dom_id: '#swagger-ui',
      deepLinking: true,
      validatorUrl: null,
      persistAuthorization: true,
      displayRequestDuration: true,
      docExpansion: 'none',
      presets: [SwaggerUIBundle.presets.apis],
      plugins: [LazyTags],
      layout: 'BaseLayout'
    })
  })
})
`

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>TimeLedger API reference</title>
<link rel="stylesheet" href="${ASSETS_PREFIX}swagger-ui.css">
<link rel="icon" type="image/png" href="${ASSETS_PREFIX}favicon-32x32.png" sizes="32x32">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${ASSETS_PREFIX}swagger-ui-bundle.js"></script>
<script src="${ASSETS_PREFIX}initializer.js"></script>
</body>
</html>
`

const INDEX = {
  name: 'TimeLedger',
  api: '/v1',
  documentation: DOCS_PATH,
  openapi: DOCUMENT_PATH,
  hint: 'the calls of an account go to its own address, http://<urlPrefix>.<BASE_DOMAIN>/v1, or the same by path, http://<BASE_DOMAIN>/tenant/<urlPrefix>/v1; /docs tries them on either',
}

const INDEX_HTML = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>TimeLedger</title></head>
<body>
<h1>TimeLedger</h1>
<p>The API is under <code>/v1</code>. The calls of an account go to its own address, <code>http://&lt;urlPrefix&gt;.&lt;BASE_DOMAIN&gt;/v1</code>, or the same by path, <code>http://&lt;BASE_DOMAIN&gt;/tenant/&lt;urlPrefix&gt;/v1</code>.</p>
<ul>
<li><a href="${DOCS_PATH}">Interactive reference</a> (its calls go to the account named in the server field, or to your account’s address when opened there)</li>
<li><a href="${DOCUMENT_PATH}">OpenAPI 3.1 description</a></li>
</ul>
</body>
</html>
`

/** Cached for an hour: the files change only with the installed package. */
const ASSET_CACHE = 'public, max-age=3600'

/**
 * The one inline style the page has: the <style> of the Swagger logo's SVG that swagger-ui-bundle.js puts in the
 * top bar, `.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}` in swagger-ui-dist 5.35.0,
 * allowed by its SHA-256 (no other inline style is). test/browser/docs.test.ts sees it if an upgrade changes it.
 */
const LOGO_STYLE_HASH = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='

/** What the pages may load and who may frame them (see the top). */
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' '${LOGO_STYLE_HASH}'`,
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const PAGE_HEADERS: Readonly<Record<string, string>> = { 'Content-Security-Policy': PAGE_POLICY, 'X-Frame-Options': 'DENY' }

function answer(contentType: string, body: string | Buffer, cache = 'no-cache'): ApiResponse {
  return { status: 200, headers: { 'Content-Type': contentType, 'Cache-Control': cache }, body }
}

/** An HTML page, with its policy. */
function page(body: string): ApiResponse {
  const response = answer('text/html; charset=utf-8', body)
  Object.assign(response.headers, PAGE_HEADERS)
  return response
}

/** Whether the client prefers HTML (a browser) to JSON. */
function wantsHtml(accept: string | undefined): boolean {
  return accept !== undefined && /\btext\/html\b/.test(accept) && !/\bapplication\/json\b/.test(accept)
}

/**
 * The answer to a GET or HEAD of `rawPath` (path only, outside /v1) when it is the entry page, the reference or one of
 * its files; null for any other path (server.ts answers those as before).
 */
export function referencePage(method: string, rawPath: string, accept: string | undefined): ApiResponse | null {
  if (method !== 'GET' && method !== 'HEAD') return null
  if (rawPath === '/' || rawPath === '') return wantsHtml(accept) ? page(INDEX_HTML) : answer('application/json; charset=utf-8', JSON.stringify(INDEX))
  if (rawPath === DOCS_PATH || rawPath === `${DOCS_PATH}/`) return page(PAGE)
  if (!rawPath.startsWith(ASSETS_PREFIX)) return null
  const name = rawPath.slice(ASSETS_PREFIX.length)
  if (name === 'initializer.js') return answer('text/javascript; charset=utf-8', INITIALIZER)
  const contentType = ASSETS.get(name)
  return contentType === undefined ? null : answer(contentType, assetBody(name), ASSET_CACHE)
}
