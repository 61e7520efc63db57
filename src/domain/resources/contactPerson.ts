/* ContactPerson (time/contacts; inner collection time/clients/{id}/contacts): a person at a client. */
import { declareResource, email, field, personName } from '../declare.js'

export const ContactPerson = declareResource({
  type: 'ContactPerson',
  path: 'time/contacts',
  writeRule: 'projectManager',
  description: 'a contact person of a client',
  displayName: (rec) => personName(rec),
  fields: [
    field.string('firstName', 'first name', { inStub: true }),
    field.string('lastName', 'last name', { inStub: true }),
    field.string('email', 'e-mail address', { constraints: [email] }),
    field.string('phone', 'phone number'),
    field.string('jobTitle', 'job title'),
    field.ref('client', 'Client', 'client the person works for'),
  ],
})
