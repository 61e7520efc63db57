/*
 * The cache of compiled $filter texts (src/query/compiledFilters.ts): a
 * repeated text is compiled once, per resource; a text that fails is never
 * kept; past the bound the least recently used entry is compiled anew.
 */
import t from 'tap'
import { resourceByType } from '../../../src/domain/resources/index.js'
import { ApiError } from '../../../src/domain/errors.js'
import { compiledFilter } from '../../../src/query/compiledFilters.js'

const projects = resourceByType('Project')
const tasks = resourceByType('Task')

t.test('a repeated text is compiled once per resource', async (t) => {
  const first = compiledFilter(projects, "name eq 'a'")
  t.equal(compiledFilter(projects, "name eq 'a'"), first, 'the same compiled filter comes back')
  t.not(compiledFilter(tasks, "name eq 'a'"), first, 'another resource has its own entry')
  t.not(compiledFilter(projects, "name eq 'b'"), first)
  const project = { id: 'x', version: 1, createdAt: 0, updatedAt: 0, trashItem: null, name: 'a' }
  t.ok(first.test(project, { get: () => undefined } as never), 'the cached filter still evaluates')
})

t.test('a text that fails is refused every time and never kept', async (t) => {
  for (let attempt = 0; attempt < 2; attempt += 1) {
    let refused: unknown = null
    try {
      compiledFilter(projects, 'nosuchfield eq 1')
    } catch (error) {
      refused = error
    }
    t.ok(refused instanceof ApiError && refused.code === 'TL01-1105', `attempt ${attempt + 1}: ${String(refused)}`)
  }
})

t.test('past the bound the least recently used entry goes', async (t) => {
  const kept = compiledFilter(projects, "code eq 'kept'")
  const dropped = compiledFilter(projects, "code eq 'dropped'")
  for (let index = 0; index < 600; index += 1) {
    compiledFilter(projects, `code eq 'filler ${index}'`)
    if (index % 100 === 0) compiledFilter(projects, "code eq 'kept'")
  }
  t.equal(compiledFilter(projects, "code eq 'kept'"), kept, 'an entry in use stays')
  t.not(compiledFilter(projects, "code eq 'dropped'"), dropped, 'an entry not used for 512 others is compiled anew')
})
