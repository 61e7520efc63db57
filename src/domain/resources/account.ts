/* Account (accounts): the tenant itself; exactly one per tenant, made by sign-up. */
import { createdField, declareResource, field, ianaTimeZone, max, min, oneOf, pattern } from '../declare.js'
import { displayFormatFields } from './displayFormats.js'

export const URL_PREFIX_PATTERN = '[a-z0-9](?:[a-z0-9-]*[a-z0-9])?'

export const Account = declareResource({
  type: 'Account',
  path: 'accounts',
  creatable: false,
  removable: false,
  description: 'the account (tenant)',
  displayName: (rec) => `${String(rec.name ?? '')} (${String(rec.urlPrefix ?? '')})`,
  fields: [
    field.string('name', 'name of the company', { required: true, inStub: true }),
    field.string('urlPrefix', 'the tenant part of the host', { access: 'READ_ONLY', constraints: [pattern(URL_PREFIX_PATTERN)], inStub: true }),
    field.ref('owner', 'User', 'owner of the account'),
    field.boolean('confirmed', 'the account was confirmed', { access: 'READ_ONLY' }),
    field.string('countryCode', 'country'),
    field.string('currency', 'currency of prices'),
    field.string('timeZone', 'IANA time zone; report days are cut in it', { defaultValue: 'UTC', constraints: [ianaTimeZone] }),
    field.integer('weekStart', 'first day of the week, Monday = 1', { defaultValue: 1, constraints: [min(1), max(7)] }),
    field.string('language', 'language'),
    field.string('vatId', 'VAT identifier'),
    field.string('phone', 'phone number'),
    field.string('website', 'web site'),
    field.string('streetAddress', 'street address'),
    field.string('additionalAddressInfo', 'additional address line'),
    field.string('zipCode', 'postal code'),
    field.string('city', 'city'),
    field.string('state', 'state or region'),
    field.string('paymentInfo', 'payment details printed on bills (bank account)'),
    field.string('vatMode', 'DECLARE_VAT or NO_VAT: whether bills declare VAT', { constraints: [oneOf('DECLARE_VAT', 'NO_VAT')] }),
    field.double('vatRate', 'VAT rate in percent', { constraints: [min(0), max(100)] }),
    ...displayFormatFields(),
    createdField(),
    field.long('licenseLimit', 'accesses allowed per product; null is unlimited', {}),
    field.long('docNumberSequence', 'last bill number given', { access: 'READ_ONLY' }),
  ],
})
