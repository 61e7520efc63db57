/*
 * Reading the files the exports answer (src/http/export/): CSV with an
 * RFC 4180 parser (quoted fields with commas, doubled quotes and line
 * breaks; every row ends in CRLF; anything else throws), XLSX with exceljs.
 */
import ExcelJS from 'exceljs'

/** RFC 4180: rows of fields; a quoted field may hold commas, doubled quotes and line breaks; rows end in CRLF. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let index = 0
  let quoted = false
  while (index < text.length) {
    const char = text[index] as string
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"'
        index += 2
      } else if (char === '"') {
        quoted = false
        index += 1
      } else {
        field += char
        index += 1
      }
    } else if (char === '"' && field === '') {
      quoted = true
      index += 1
    } else if (char === ',') {
      row.push(field)
      field = ''
      index += 1
    } else if (char === '\r' && text[index + 1] === '\n') {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
      index += 2
    } else {
      if (char === '\n' || char === '\r' || char === '"') throw new Error(`bare ${JSON.stringify(char)} outside quotes at ${index}`)
      field += char
      index += 1
    }
  }
  if (quoted) throw new Error('unterminated quoted field')
  if (field !== '' || row.length > 0) throw new Error('the last row does not end in CRLF')
  return rows
}

/** Rows as objects keyed by the header row. */
export function csvObjects(text: string): { header: string[]; rows: Record<string, string>[] } {
  const [header, ...rows] = parseCsv(text)
  if (header === undefined) throw new Error('no header row')
  for (const row of rows) if (row.length !== header.length) throw new Error(`a row of ${row.length} fields under ${header.length} columns`)
  return { header, rows: rows.map((row) => Object.fromEntries(header.map((name, index) => [name, row[index] as string]))) }
}

export async function readXlsx(body: Buffer): Promise<{ header: string[]; rows: Record<string, ExcelJS.CellValue>[]; sheet: ExcelJS.Worksheet }> {
  const workbook = new ExcelJS.Workbook()
  await workbook.xlsx.load(body as unknown as ExcelJS.Buffer)
  const sheet = workbook.worksheets[0]
  if (sheet === undefined) throw new Error('no sheet')
  const header = (sheet.getRow(1).values as ExcelJS.CellValue[]).slice(1).map(String)
  const rows: Record<string, ExcelJS.CellValue>[] = []
  sheet.eachRow((row, number) => {
    if (number === 1) return
    const values = row.values as ExcelJS.CellValue[]
    rows.push(Object.fromEntries(header.map((name, index) => [name, values[index + 1] ?? null])))
  })
  return { header, rows, sheet }
}
