/*
 * Client (time/clients): a customer that projects and bills are for. Its
 * projects-count follows project visibility (resources.md): a personal
 * project counts only for its owner, as in time/clients/{id}/projects.
 */
import type { Rec } from '../schema.js'
import { declareResource, email, externalSyncFields, field, pattern, size } from '../declare.js'

/** The owner of a personal project, the only user who sees it; null for a project everyone sees. */
function personalProjectOwner(project: Rec): string | null {
  return project.personal === true && typeof project.owner === 'string' ? project.owner : null
}

export const Client = declareResource({
  type: 'Client',
  path: 'time/clients',
  aliases: ['clients'],
  writeRule: 'projectManager',
  description: 'a client',
  cascades: ['Bill', 'ContactPerson'],
  displayName: (rec) => String(rec.name ?? ''),
  appends: [
    { name: 'projects-count', field: 'projectsCount', childType: 'Project', via: 'client', visibleOnlyTo: personalProjectOwner },
    { name: 'bills-count', field: 'billsCount', childType: 'Bill', via: 'client' },
  ],
  inner: [
    { name: 'projects', childType: 'Project', via: 'client' },
    { name: 'bills', childType: 'Bill', via: 'client' },
    { name: 'contacts', childType: 'ContactPerson', via: 'client' },
  ],
  fields: [
    field.string('name', 'name of the client', { inStub: true }),
    field.string('code', 'short code', { constraints: [size(0, 20)] }),
    field.boolean('active', 'client is active', { defaultValue: true }),
    field.string('email', 'e-mail address', { constraints: [email] }),
    field.string('phone', 'phone number'),
    field.string('website', 'web site'),
    field.string('vatId', 'VAT identifier'),
    field.string('streetAddress', 'street address'),
    field.string('additionalAddressInfo', 'additional address line'),
    field.string('zipCode', 'postal code'),
    field.string('city', 'city'),
    field.string('state', 'state or region'),
    field.string('countryCode', 'country code', { constraints: [size(3, 3), pattern('[A-Z]+')] }),
    field.date('consentTill', 'the client consented to keeping their data until this date'),
    ...externalSyncFields(),
    field.long('projectsCount', 'number of projects (append=projects-count)', { access: 'READ_ONLY', computed: true }),
    field.long('billsCount', 'number of bills (append=bills-count)', { access: 'READ_ONLY', computed: true }),
  ],
})
