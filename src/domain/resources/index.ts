/*
 * The registry of declared resources: look a declaration up by type name or
 * by any of its paths. Adding a resource is adding its file and one line here.
 */
import type { ResourceDecl } from '../schema.js'
import { Account } from './account.js'
import { AuthToken } from './authToken.js'
import { Client } from './client.js'
import { ExternalSystem } from './externalSystem.js'
import { Project } from './project.js'
import { TrashItem } from './trashItem.js'
import { User } from './user.js'

export const RESOURCES: readonly ResourceDecl[] = [Account, AuthToken, Client, ExternalSystem, Project, TrashItem, User]

const byType = new Map(RESOURCES.map((decl) => [decl.type, decl]))
const byPath = new Map<string, ResourceDecl>()
for (const decl of RESOURCES) {
  for (const path of [decl.path, ...decl.aliases]) if (path !== null && !decl.internal) byPath.set(path, decl)
}

export function resourceByType(type: string): ResourceDecl {
  const decl = byType.get(type)
  if (decl === undefined) throw new Error(`unknown resource type ${type}`)
  return decl
}

export function findResourceByType(type: string): ResourceDecl | undefined {
  return byType.get(type)
}

export function resourceByPath(path: string): ResourceDecl | undefined {
  return byPath.get(path)
}

/** Every path prefix a resource answers on, longest first, for the router. */
export const RESOURCE_PATHS: readonly string[] = [...byPath.keys()].sort((a, b) => b.length - a.length)

// Invariant: every reference names a declared type.
for (const decl of RESOURCES) {
  for (const fieldDecl of decl.fields) {
    if (fieldDecl.ref !== undefined && !byType.has(fieldDecl.ref)) {
      throw new Error(`${decl.type}.${fieldDecl.name} references undeclared type ${fieldDecl.ref}`)
    }
  }
}
