/*
 * Prints a FilterNode in Olingo's fully bracketed tree notation, the form
 * used by the conformance corpus: `{left op right}`, `{not x}`, `{- x}`,
 * `{name(arg,arg)}`, paths left-nested as `{{a/b}/c}`, literals as written.
 * Plain recursion is safe: parseFilter keeps trees to about a thousand
 * levels (a flat chain filling MAX_FILTER_LENGTH), see filterParser.ts.
 */
import type { FilterNode } from './filterAst.js'

export function printFilterTree(node: FilterNode): string {
  switch (node.kind) {
    case 'binary':
      return `{${printFilterTree(node.left)} ${node.op} ${printFilterTree(node.right)}}`
    case 'unary':
      return `{${node.op === 'not' ? 'not' : '-'} ${printFilterTree(node.operand)}}`
    case 'call':
      return `{${node.name}(${node.args.map(printFilterTree).join(',')})}`
    case 'member':
      return node.path.reduce((left, name) => `{${left}/${name}}`)
    case 'literal':
      return node.text
  }
}
