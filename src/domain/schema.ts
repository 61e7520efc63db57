/*
 * Resource declarations: the single description of every resource (fields,
 * types, access, defaults, constraints, references, cascades, indexes,
 * display name). Every generic behaviour — input parsing and validation,
 * rendering, stubs, $metadata, $dummy, XML names, indexes, trash cascades —
 * reads a ResourceDecl; nothing is written again per resource.
 *
 * In memory a stored object is a `Rec` (record.ts). Derived fields
 * (`derive`) are never stored: render, $filter and $orderby compute them
 * from the record and the live aggregates of the state. Fields a resource
 * derives when a record is written (`deriveOnWrite`: a time record's stop
 * or duration from the other two) are stored with it.
 *
 * This file says what a declaration is; declare.ts holds the builders the
 * declarations are written with (field.*, the constraints, declareResource).
 */
import type { Audience } from './audience.js'
import type { Caller } from './caller.js'
import type { DirectoryMarkerFeed, GlobalIndexFeed } from './globalFeed.js'
import type { DisplayContext, Rec } from './record.js'
import type { StateView, Tx } from './tx.js'
import type { WriteCheck } from './writeCheck.js'

export type { DisplayContext, LiveAggregates, Rec } from './record.js'

type ScalarType = 'String' | 'Boolean' | 'Long' | 'Integer' | 'Double' | 'Date'
/**
 * READ_WRITE, READ_ONLY and WRITE_ONLY as clients see them in `$metadata`; INTERNAL: kept by the server alone (a
 * secret's hash), never read from a body, shown, filtered or sorted by, nor listed in `$metadata`.
 */
type FieldAccess = 'READ_WRITE' | 'READ_ONLY' | 'WRITE_ONLY' | 'INTERNAL'

export type Constraint =
  | { type: 'NotNull' }
  | { type: 'Size'; min: number; max: number }
  /** `example`: a value that matches, which $dummy shows (dummy.ts). */
  | { type: 'Pattern'; regexp: string; example?: string }
  | { type: 'Min'; value: number }
  | { type: 'Max'; value: number }
  | { type: 'Email' }
  | { type: 'Enum'; values: readonly string[] }
  /** An IANA time zone name that Intl accepts (`Europe/Berlin`, `UTC`). */
  | { type: 'TimeZone' }

export interface FieldDecl {
  readonly name: string
  /** A scalar type, or for references the referenced resource type name. */
  readonly type: ScalarType | string
  /** Set for references: the referenced resource type. */
  readonly ref?: string
  /**
   * A list of references (`refList`): stored as an array of distinct ids
   * (at most MAX_LIST_REFS), rendered as an array of referenced objects,
   * matched in $filter by eq/ne against one value (any element equals / none
   * does), never indexed, sorted by, nor used in report grouping.
   */
  readonly list: boolean
  readonly access: FieldAccess
  readonly description: string
  readonly defaultValue?: string | number | boolean
  readonly constraints: readonly Constraint[]
  /** A secondary index of the non-null values (references are indexed unless declared otherwise). */
  readonly indexed: boolean
  /** A day-bucketed range index (date fields that lists filter and sort by). */
  readonly rangeIndexed: boolean
  /** Kept in stubs (a part of the display name). */
  readonly inStub: boolean
  /** Counters filled by `append` are not stored: the engine fills them from live aggregates. */
  readonly computed: boolean
  /** A password: stored as its Argon2id hash (credentials.ts), never shown. */
  readonly hashed: boolean
  /** Written on create only; later changes are ignored like a read-only field's. */
  readonly setOnce: boolean
  /** A derived field (also `computed`): its value, from the record and the live aggregates. */
  readonly derive?: DeriveValue
}

type DeriveValue = (rec: Rec, context: DisplayContext) => unknown

/**
 * Fields a resource derives from a record's other fields whenever the record is written through the generic write
 * path (a create, an update, `$set`, PATCH, an action that creates or changes one: domain/operations/createObject.ts,
 * updateObject.ts), stored with it: `rec` is the record as the write would store it, `given` the values the write
 * itself names (a field may be named with null), `nowMs` the write's time, decided before the write is logged (so a
 * replay of the log stores the same: the derived values travel in the logged record). Returns the values to store
 * over the record's (the same empty object when there are none); the permission, the locks, the write options
 * (calculate_price) and the constraints then see the record with them.
 */
type DeriveOnWrite = (rec: Rec, given: Readonly<Record<string, unknown>>, nowMs: number) => Readonly<Record<string, unknown>>

/**
 * A query option of the generic writes (`calculate_price=true`): asked for, it derives fields of the record about to
 * be stored from the record and the state (the price from the price lists), stored with the others. Using it on a
 * resource that does not declare it is a 400.
 */
interface WriteOption {
  readonly param: string
  readonly derive: (rec: Rec, state: StateView) => Record<string, unknown>
}

/** A hook run on a new record before it is validated and stored; `creator` is null for internal writes. */
type OnCreate = (tx: Tx, rec: Rec, creator: Caller | null) => Rec

/**
 * A hook run after a stored record changed through the generic paths —
 * update, trash, restore (`after` the new record) or removal for good
 * (`after` undefined) — inside the same write, so what it writes is logged
 * with the change. `by` is the session the change was made in, when a
 * user's request made it (null for internal changes).
 */
type OnChange = (tx: Tx, before: Rec, after: Rec | undefined, by?: ChangeSession | null) => void

/**
 * The session a change is made in: the user and the access token (its SHA-256 id) of the request, and the password
 * the request proved it knows, when it did (`currentPassword`: a change of one's own password needs it,
 * passwordRules.ts).
 */
export interface ChangeSession {
  readonly userId: string
  readonly tokenId: string
  readonly knownPassword?: KnownPassword
}

/**
 * A user's stored password that a request's `currentPassword` matched, checked before the write (the check is slow):
 * the hash it matched, at the User's version then. The write takes it as proof while the User still has that password.
 */
export interface KnownPassword {
  readonly userId: string
  readonly hash: string
  readonly version: number
}

/**
 * How a resource's changes appear in the change feed and the webhooks (domain/changes.ts) when not as its path and
 * GET show them: never (records that change with every delivery of a webhook), or under an event resource of their
 * own, with their own visibility and object (an internal resource such as the key/value storage entries).
 */
type ChangeEvents =
  | 'never'
  | {
      readonly resource: string
      /** Who sees a record's events (audience.ts); a removed record's is logged with its removal. */
      readonly audience: (rec: Rec) => Audience
      readonly object: (rec: Rec) => Record<string, unknown>
    }

export interface ResourceDecl {
  readonly type: string
  /** The collection path under /v1, e.g. `time/projects`; null for internal collections. */
  readonly path: string | null
  /** Other paths that address the same collection (`projects` for `time/projects`). */
  readonly aliases: readonly string[]
  readonly description: string
  readonly fields: readonly FieldDecl[]
  readonly fieldsByName: ReadonlyMap<string, FieldDecl>
  /** Types moved to the trash (or removed) together with an object of this type. */
  readonly cascades: readonly string[]
  /** Parts written with an object of this type (a bill's items and VAT rows): `$metadata` lists them as PERSIST and MERGE cascades. */
  readonly savedWith: readonly string[]
  readonly displayName: (rec: Rec, context: DisplayContext) => string
  /** Element name of one object in XML (`project`); a list's root is the last path segment. */
  readonly xmlItemName: string
  readonly xmlListName: string
  /** Not exposed over HTTP (tokens, storage entries, confirmations). */
  readonly internal: boolean
  /** How its changes are events, when not as its path and GET show them (an internal resource: never, unless set). */
  readonly changeEvents: ChangeEvents | null
  /** Who may create, change and delete objects of this resource (policy.ts reads it). */
  readonly writeRule: WriteRule
  /** Who sees the records: everyone in the tenant, only the user a record belongs to (superusers neither), or superusers only. */
  readonly readRule: ReadRule
  /**
   * Who else may remove a record, without seeing it (policy.ts checkRemove): 'managersOfUser', a superuser who may
   * change the record's user (an admin: any user but the account owner; the owner: anyone), so that a credential can
   * be revoked without being read; null: the write rule alone decides.
   */
  readonly revocableBy: 'managersOfUser' | null
  /** A DELETE removes a record for good, never to the trash (a revoked credential must not come back from it). */
  readonly removedForGood: boolean
  /** Field combinations no two live records may share (e.g. a user's e-mail, a project member). */
  readonly unique: readonly (readonly string[])[]
  /** Whether clients may create objects through the generic endpoints (POST). */
  readonly creatable: boolean
  /** … change them (PUT, `$set`). */
  readonly updatable: boolean
  /** … and remove them (DELETE). */
  readonly removable: boolean
  /** `append` counters this resource offers. */
  readonly appends: readonly AppendCounter[]
  /** Inner collections: `/{path}/{id}/{name}` lists children whose `via` field is the id. */
  readonly inner: readonly InnerCollection[]
  /** Live sums over children, read by derived fields. */
  readonly sums: readonly LiveSum[]
  /** Fields derived and stored with every write of a record through the generic write path (DeriveOnWrite). */
  readonly deriveOnWrite?: DeriveOnWrite
  /** Runs on every new record before validation (generated numbers, defaults from the creator). */
  readonly onCreate?: OnCreate
  /** Runs after every change of a stored record (consequences such as ending a user's sessions). */
  readonly onChange?: OnChange
  /** For a record that stands for another object (a trash item for its deleted object): that object, whose visibility it shares. */
  readonly standsFor?: StandsFor
  /** Rules between fields of one record (stop not before start), checked with the constraints of every stored record. */
  readonly recordCheck?: RecordCheck
  /**
   * A date field in whose order (then by id) every secondary index can read
   * each value's records (engine/orderedRows.ts: kept in it from their first
   * read in it), so a list pinned to a value and sorted by that field
   * (`project/id eq '…'` and `$orderby=start desc`) reads one page, not
   * every record of the value; null when the indexes keep no order.
   */
  readonly indexOrder: string | null
  /**
   * The date field a Lock applies to (locks.ts): an object of this resource
   * dated before its user's lock date is created, changed and deleted by
   * superusers only; null when locks do not apply.
   */
  readonly lockedByDate: string | null
  /** The global index its records feed (globalFeed.ts); null when none. */
  readonly globalIndex: GlobalIndexFeed | null
  /** The tenant directory's marker its records set (globalFeed.ts); null when none. */
  readonly directoryMarker: DirectoryMarkerFeed | null
  /** The check of what the generic writes store beyond the constraints (writeCheck.ts); null when none. */
  readonly writeCheck: WriteCheck | null
  /** The query options of its generic writes (WriteOption). */
  readonly writeOptions: readonly WriteOption[]
}

/**
 * Who sees a resource's records (policy.ts canSee): everyone in the tenant; only the user a record belongs to
 * (`user`), the owner and admins neither (`userOnly`: a user's credentials); superusers only.
 */
type ReadRule = 'everyone' | 'userOnly' | 'superuser'

type StandsFor = (rec: Rec) => { readonly type: string; readonly id: string }

/** A rule a record breaks between its fields: the field it names, the constraint's name and what is wrong (after "Type.field "). */
export interface FieldsRuleBroken {
  readonly field: string
  readonly constraint: string
  readonly message: string
}

/** The rules between fields a record breaks; an empty list (shared, not allocated) when it keeps them. */
type RecordCheck = (rec: Rec) => readonly FieldsRuleBroken[]

/**
 * An `append` counter: `field` of a parent shows how many live (not
 * trashed) `childType` records refer to it through `via` and pass `counts`.
 */
export interface AppendCounter {
  readonly name: string
  readonly field: string
  readonly childType: string
  readonly via: string
  readonly counts?: (child: Rec) => boolean
  /**
   * The one user who may see this child (a personal project's owner), or
   * null when everyone who sees the parent sees it; such a child counts
   * only for that user.
   */
  readonly visibleOnlyTo?: (child: Rec) => string | null
}

export interface InnerCollection {
  readonly name: string
  readonly childType: string
  readonly via: string
}

/**
 * A live sum: for each parent, the sum of `value` over the live (not
 * trashed) `childType` records that refer to it through `via`. Values are
 * money: kept in integer hundredths, so adding and removing never drifts.
 */
export interface LiveSum {
  readonly name: string
  readonly childType: string
  readonly via: string
  /** The child's contribution; null adds nothing. */
  readonly value: (child: Rec) => number | null
}

/**
 * Write permission families of resources.md. The account owner and admins
 * ("superusers") may always write; beyond them:
 * - superuser: nobody else;
 * - projectManager: users with projectManager;
 * - projectOwner: the owner of the project (a Project's `owner`, or the
 *   `project` a record belongs to), and project managers;
 * - ownRecord: the user the record belongs to (`user`), and a project
 *   manager who owns the record's project;
 * - self: a user on their own User object, except admin, active and
 *   projectManager.
 */
type WriteRule = 'superuser' | 'projectManager' | 'projectOwner' | 'ownRecord' | 'self'
