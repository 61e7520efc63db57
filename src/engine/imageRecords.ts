/*
 * The records of a snapshot's columns (tableImage.ts) whose layout is not
 * the collection's any more: a field declared, dropped or of another type
 * since the snapshot was written. Such a collection is loaded record by
 * record, as an older snapshot's, from readers over the stored chunks
 * (the frozen views' classes), slower but exact; a snapshot written by the
 * same declarations never comes here (ColumnTable.fitsImage).
 */
import type { Rec } from '../domain/schema.js'
import { CodeView, NumberView, type ColumnReader } from './columns.js'
import { FlagView } from './flagColumn.js'
import { IdView } from './idColumn.js'
import { LiveRows } from './liveRows.js'
import { addExtras, extrasChunksOfStored, type Extras } from './rowExtras.js'
import type { StringPool } from './stringPool.js'
import type { ColumnChunks, TableImage } from './tableImage.js'
import { ValueView } from './valueColumn.js'

function readerOf(chunks: ColumnChunks, pool: StringPool): ColumnReader {
  switch (chunks.kind) {
    case 'id':
      return new IdView([...chunks.words], [...chunks.others])
    case 'number':
      return new NumberView([...chunks.floats], [...chunks.ints], [...chunks.constants], chunks.misfits)
    case 'code':
      return new CodeView(pool, [...chunks.arrays], [...chunks.constants], chunks.misfits)
    case 'flag':
      return new FlagView([...chunks.arrays], [...chunks.constants], chunks.misfits)
    case 'value':
      return new ValueView([...chunks.arrays], [...chunks.constants])
  }
}

/** The live rows' records of `image`, made one at a time; its texts are read from `pool` (restored from the same snapshot). */
export function* imageRecords(image: TableImage, pool: StringPool): IterableIterator<Rec> {
  const readers = image.columns.map((chunks) => readerOf(chunks, pool))
  const stored = extrasChunksOfStored(image.extras)
  const extras = new ValueView([...stored.arrays], [...stored.constants])
  for (const row of new LiveRows(image.alive, image.rowCount, 0)) {
    const rec: Record<string, unknown> = {}
    for (const [at, name] of image.names.entries()) rec[name] = (readers[at] as ColumnReader).get(row)
    const extra = extras.get(row)
    if (extra !== null) addExtras(rec, extra as Extras)
    yield rec as Rec
  }
}
