/*
 * The operations of the declared resources, as the generic endpoints
 * (routes/resources.ts) answer them, for every resource path (an alias,
 * such as `projects` for `time/projects`, is described once: its list,
 * saying that everything below the path answers below the alias too):
 *
 *   /{path}                 GET list, POST create (when creatable)
 *   /{path}/{id}            GET, PUT and PATCH (when updatable), DELETE (when removable)
 *   /{path}/$count          GET, text/plain
 *   /{path}/$metadata       GET;  /{path}/$dummy  GET
 *   /{path}/summary         GET
 *   /{path}/@deleted        GET;  /{path}/{id}/@deleted  GET
 *   /{path}/{id}/$set       POST (when updatable)
 *   /{path}/{id}/$history   GET: the object's changes, newest first (routes/history.ts)
 *   /{path}/@{view}         GET, for each view of the type (routes/views.ts)
 *   /{path}/[{id}/]${name}  each action of the type (actionDescriptions.ts)
 *   /{path}/{parentId}/{inner}[/…]  each inner collection, with the endpoints above
 *                           (but actions and deeper inner collections)
 *
 * Operations are tagged with the resource type, so a reader finds a
 * resource's operations together (`Project`).
 */
import { resourceByType } from '../../domain/resources/index.js'
import type { ResourceDecl } from '../../domain/schema.js'
import { viewNamesOf, viewSummaryNamesOf } from '../routes/views.js'
import { WRITE_OPTIONS } from '../routes/writeOptions.js'
import { ACTION_DESCRIPTIONS, METHOD_ACTIONS } from './actionDescriptions.js'
import { schemaRef, type JsonSchema } from './jsonSchema.js'
import { answers, dataAnswer, exportable, jsonBody, mergePatchBody, NOT_MODIFIED, operationIdOf, SIGNED_IN, textAnswer, withHeaders, type Operation } from './operations.js'
import { parameterRef, pathParameter, type Parameter } from './parameters.js'
import { answerSchemaName, requestSchemaName } from './resourceSchemas.js'

type Paths = Record<string, Record<string, Operation>>

const FORMAT = [parameterRef('format'), parameterRef('suppress_response_code'), parameterRef('dates')]
const LIST_OPTIONS = [parameterRef('filter'), parameterRef('orderby'), parameterRef('top'), parameterRef('skip'), parameterRef('no_expand'), parameterRef('inlinecount'), parameterRef('ifNoneMatch')]
/** A page of a list: its ETag, the total with $inlinecount=allpages, the links to the pages beside it; 304 on a current ETag. */
const listAnswers = (description: string, schema: JsonSchema) => answers({ '200': withHeaders(exportable(dataAnswer(description, schema)), ['ETag', 'X-Total-Count', 'Link']), '304': NOT_MODIFIED })
/** An answer with an ETag, and 304 on a current one. */
const taggedAnswers = (answer: Record<string, unknown>) => answers({ '200': withHeaders(answer, ['ETag']), '304': NOT_MODIFIED })

function appendParameter(decl: ResourceDecl): Parameter[] {
  if (decl.appends.length === 0) return []
  const names = decl.appends.map((counter) => counter.name)
  return [{ name: 'append', in: 'query', description: `counters to fill on every object, comma-separated: ${names.join(', ')}`, schema: { type: 'string' } }]
}

function writeOptionParameters(decl: ResourceDecl): Parameter[] {
  return WRITE_OPTIONS.filter((option) => option.types.includes(decl.type)).map((option) => ({
    name: option.param,
    in: 'query' as const,
    description: '`true`: derive fields of the stored object (for calculate_price: the price from the price lists)',
    schema: { type: 'string', enum: ['true', 'false'] },
  }))
}

function listOf(decl: ResourceDecl): JsonSchema {
  return { type: 'array', items: schemaRef(answerSchemaName(decl.type)) }
}

function operation(method: string, path: string, decl: ResourceDecl, summary: string, rest: Omit<Operation, 'operationId' | 'summary' | 'tags'>): Operation {
  return { operationId: operationIdOf(method, path), summary, tags: [decl.type], security: SIGNED_IN, ...rest }
}

/** The answer of a create or update: `{id, version}`, or the object with response_object=true. */
function writeAnswer(decl: ResourceDecl, status: string, what: string): Record<string, unknown> {
  return answers({ [status]: dataAnswer(`${what}: {id, version}, or the whole object with response_object=true`, { anyOf: [schemaRef('WriteResult'), schemaRef(answerSchemaName(decl.type))] }) })
}

/** The operations on a collection at `path` (a resource path, or an inner collection `…/{id}/name`). */
function collectionOperations(decl: ResourceDecl, path: string, parents: Parameter[], paths: Paths): void {
  const type = decl.type
  const at = (suffix: string) => `/${path}${suffix}`
  const list: Record<string, Operation> = {
    get: operation('GET', path, decl, `list ${type} objects`, {
      parameters: [...parents, ...LIST_OPTIONS, ...appendParameter(decl), ...FORMAT],
      responses: listAnswers(`the ${type} objects that match, one page`, listOf(decl)),
    }),
  }
  if (decl.creatable || METHOD_ACTIONS.has(`${type}:POST`)) {
    list.post = operation('POST', path, decl, `create a ${type}`, {
      parameters: [...parents, parameterRef('response_object'), ...appendParameter(decl), ...writeOptionParameters(decl), ...FORMAT],
      requestBody: jsonBody(schemaRef(requestSchemaName(type)), `the new ${type}`),
      responses: writeAnswer(decl, '201', 'created'),
    })
  }
  paths[at('')] = list
  paths[at('/$count')] = {
    get: operation('GET', `${path}/$count`, decl, `count ${type} objects`, {
      parameters: [...parents, parameterRef('filter'), parameterRef('ifNoneMatch')],
      responses: taggedAnswers(textAnswer('the number of matching objects', { type: 'string', pattern: '^\\d+$' })),
    }),
  }
  paths[at('/summary')] = {
    get: operation('GET', `${path}/summary`, decl, `sum up ${type} objects`, {
      parameters: [...parents, parameterRef('summary'), parameterRef('filter'), parameterRef('ifNoneMatch'), ...FORMAT],
      responses: taggedAnswers(exportable(dataAnswer('one entry per group', schemaRef('Summary')))),
    }),
  }
  paths[at('/$metadata')] = {
    get: operation('GET', `${path}/$metadata`, decl, `the metadata document of ${type}`, {
      parameters: [...parents, ...FORMAT],
      responses: answers({ '200': dataAnswer('fields, types, access, constraints and cascades', schemaRef('Metadata')) }),
    }),
  }
  paths[at('/$dummy')] = {
    get: operation('GET', `${path}/$dummy`, decl, `a sample ${type} with random values`, {
      parameters: [...parents, ...FORMAT],
      responses: answers({ '200': dataAnswer('a sample object (not stored)', { type: 'object' }) }),
    }),
  }
  paths[at('/@deleted')] = {
    get: operation('GET', `${path}/@deleted`, decl, `list trashed ${type} objects`, {
      parameters: [...parents, ...LIST_OPTIONS, ...FORMAT],
      responses: listAnswers('the trashed objects', listOf(decl)),
    }),
  }
  for (const view of viewNamesOf(type)) {
    paths[at(`/${view}`)] = {
      get: operation('GET', `${path}/${view}`, decl, `list the ${type} objects of the view ${view}`, {
        parameters: [...parents, ...LIST_OPTIONS, ...appendParameter(decl), ...FORMAT],
        responses: listAnswers('the objects of the view', listOf(decl)),
      }),
    }
  }
  for (const name of viewSummaryNamesOf(type)) {
    paths[at(`/${name}`)] = {
      get: operation('GET', `${path}/${name}`, decl, `sum up the ${type} objects of ${name.replace(/summary$/, '')}`, {
        parameters: [...parents, parameterRef('summary'), parameterRef('filter'), ...FORMAT],
        responses: answers({ '200': dataAnswer('one entry per group', schemaRef('Summary')) }),
      }),
    }
  }
  itemOperations(decl, path, parents, paths)
  actionOperations(decl, path, parents, paths)
}

function itemOperations(decl: ResourceDecl, path: string, parents: Parameter[], paths: Paths): void {
  const type = decl.type
  const itemPath = `${path}/{id}`
  const id = pathParameter('id')
  const item: Record<string, Operation> = {
    get: operation('GET', itemPath, decl, `read a ${type}`, {
      parameters: [...parents, id, parameterRef('no_expand'), ...appendParameter(decl), parameterRef('ifNoneMatch'), ...FORMAT],
      responses: taggedAnswers(dataAnswer(`the ${type}`, schemaRef(answerSchemaName(type)))),
    }),
  }
  if (decl.updatable) {
    const parameters = [...parents, id, parameterRef('response_object'), parameterRef('version_ignore'), parameterRef('ifMatch'), ...appendParameter(decl), ...writeOptionParameters(decl), ...FORMAT]
    item.put = operation('PUT', itemPath, decl, `update a ${type}`, {
      description: 'The body names the changed fields and the object’s `version`; a missing or stale version answers 409 (unless version_ignore=true).',
      parameters,
      requestBody: jsonBody(schemaRef(requestSchemaName(type)), `the changed fields and version`),
      responses: writeAnswer(decl, '200', 'updated'),
    })
    item.patch = operation('PATCH', itemPath, decl, `change fields of a ${type} (JSON Merge Patch)`, {
      description:
        'A JSON Merge Patch (RFC 7396) of the object, as `application/merge-patch+json` or `application/json`: the fields named change, `null` clears a field (412 for one that may not be null), a reference given as an object without `id` stays as it is, an array replaces the list. The same update as PUT: the body’s `version` or If-Match is checked the same way (409, 412), the same validation and permissions.',
      parameters,
      requestBody: mergePatchBody(schemaRef(requestSchemaName(type)), 'the fields to change, and version'),
      responses: writeAnswer(decl, '200', 'updated'),
    })
  }
  if (decl.removable || METHOD_ACTIONS.has(`${type}:DELETE`)) {
    item.delete = operation('DELETE', itemPath, decl, type === 'TrashItem' ? 'empty one trash item (its object is gone for good)' : `move a ${type} to the trash`, {
      parameters: [...parents, id, ...(type === 'TrashItem' ? [] : [parameterRef('hard'), parameterRef('ifMatch')]), ...FORMAT],
      responses: answers({ '200': dataAnswer('the trash item the object went to, or deleted: true', schemaRef('DeleteResult')) }),
    })
  }
  paths[`/${itemPath}`] = item
  paths[`/${itemPath}/$history`] = {
    get: operation('GET', `${itemPath}/$history`, decl, `the history of a ${type}: its changes, newest first`, {
      description:
        'Every change of the object the log still holds (from `availableFrom`), newest first: who made it, its kind and, for an update, each changed field the caller may read with its old and new value. Visible to those a GET shows the object (an object removed for good: to those who saw it); 404 otherwise.',
      parameters: [...parents, id, parameterRef('historyTop'), parameterRef('before'), ...FORMAT],
      responses: answers({ '200': withHeaders(dataAnswer(`the ${type}’s changes`, schemaRef('History')), ['Link']) }),
    }),
  }
  paths[`/${itemPath}/@deleted`] = {
    get: operation('GET', `${itemPath}/@deleted`, decl, `read a trashed ${type}`, {
      parameters: [...parents, id, parameterRef('no_expand'), ...FORMAT],
      responses: answers({ '200': dataAnswer(`the trashed ${type}`, schemaRef(answerSchemaName(type))) }),
    }),
  }
  if (decl.updatable) {
    paths[`/${itemPath}/$set`] = {
      post: operation('POST', `${itemPath}/$set`, decl, `set fields of a ${type} from the query`, {
        description: 'Every other query parameter `<field>=<value>` is set; `version` is checked when given.',
        parameters: [...parents, id, { name: 'version', in: 'query', description: 'checked when given', schema: { type: 'integer' } }, parameterRef('ifMatch'), ...FORMAT],
        responses: answers({ '200': dataAnswer(`the changed ${type}`, schemaRef(answerSchemaName(type))) }),
      }),
    }
  }
  for (const inner of decl.inner) {
    // One level of inner collections is described; each accepts the options of its top-level collection.
    if (parents.length > 0) continue
    collectionOperations(resourceByType(inner.childType), `${path}/{parentId}/${inner.name}`, [pathParameter('parentId', `the id of the ${type}`)], paths)
  }
}

function actionOperations(decl: ResourceDecl, path: string, parents: Parameter[], paths: Paths): void {
  // Actions are described at the resource's own paths only.
  if (parents.length > 0) return
  for (const [key, action] of ACTION_DESCRIPTIONS) {
    const [type, name] = key.split(':') as [string, string]
    if (type !== decl.type) continue
    const actionPath = action.on === 'object' ? `${path}/{id}/${name}` : `${path}/${name}`
    const answered = action.answers ?? type
    const schema = action.answer === 'self' ? schemaRef(answerSchemaName(answered)) : action.answer
    const item: Record<string, Operation> = {}
    for (const method of action.methods) {
      const ops: Operation = operation(method, actionPath, decl, action.summary, {
        parameters: [...(action.on === 'object' ? [pathParameter('id')] : []), ...(action.query ?? []), ...FORMAT],
        ...(action.body === undefined || method === 'GET'
          ? {}
          : { requestBody: action.body === 'self' ? jsonBody(schemaRef(requestSchemaName(type)), `a ${type}`) : jsonBody(action.body.schema, action.body.description, action.body.required) }),
        responses: answers(Object.fromEntries((action.statuses ?? ['200']).map((status) => [status, dataAnswer(action.summary, schema)]))),
      })
      item[method.toLowerCase()] = ops
    }
    paths[`/${actionPath}`] = item
  }
}

/**
 * An alias of a resource path (`projects` for `time/projects`), described once: its list, saying that every path
 * below the resource's own answers the same below the alias. Describing each again doubled the resource's operations
 * (and those of its inner collections' types) in the description and on the reference page.
 */
function aliasOperations(decl: ResourceDecl, alias: string, path: string): Record<string, Operation> {
  return {
    get: operation('GET', alias, decl, `list ${decl.type} objects (/${alias} is /${path})`, {
      description: `\`/${alias}\` is another name of \`/${path}\`: every path and operation below \`/${path}\` (objects, PATCH and PUT, \`$count\`, \`$metadata\`, \`$dummy\`, \`summary\`, views, actions, inner collections) answers the same below \`/${alias}\`, and is described once, under \`/${path}\`.`,
      parameters: [...LIST_OPTIONS, ...appendParameter(decl), ...FORMAT],
      responses: listAnswers(`the ${decl.type} objects that match, one page`, listOf(decl)),
    }),
  }
}

/** The paths of every resource path of the declarations given, and their aliases once each. */
export function resourcePaths(decls: readonly ResourceDecl[]): Paths {
  const paths: Paths = {}
  for (const decl of decls) {
    if (decl.path === null) continue
    collectionOperations(decl, decl.path, [], paths)
    for (const alias of decl.aliases) paths[`/${alias}`] = aliasOperations(decl, alias, decl.path)
  }
  return paths
}
