import { describe, expect, it } from 'vitest';
import { can, canSeeEvent, fieldErrors, PERMISSIONS, ROLES, signInSchema, userCreateSchema } from './users.schema.js';

const errorsOf = (input: unknown) => {
  const r = userCreateSchema.safeParse(input);
  return r.success ? {} : fieldErrors(r.error);
};

describe('userCreateSchema', () => {
  it('normalises the e-mail and treats empty form fields as not given', () => {
    const r = userCreateSchema.parse({ email: '  Ops@Example.COM ', role: 'operator', organisation: '', password: '' });
    expect(r).toEqual({ email: 'ops@example.com', role: 'operator', organisation: undefined, password: undefined });
  });

  it('names each bad field', () => {
    expect(errorsOf({ email: 'nope', role: 'boss', password: 'short' })).toEqual({
      email: 'not an e-mail address',
      role: 'one of admin, operator, promoter, viewer, scanner',
      password: 'at least 12 characters',
    });
  });

  it('a promoter needs an organisation; the other roles may not have one', () => {
    expect(errorsOf({ email: 'p@example.com', role: 'promoter' })).toEqual({ organisation: 'a promoter needs an organisation' });
    expect(errorsOf({ email: 'v@example.com', role: 'viewer', organisation: 'Acme' })).toHaveProperty('organisation');
    expect(errorsOf({ email: 'p@example.com', role: 'promoter', organisation: ' Acme Live ' })).toEqual({});
  });
});

describe('signInSchema', () => {
  it('asks for both fields but applies no password policy', () => {
    expect(signInSchema.safeParse({ email: 'A@b.co', password: 'x' }).data).toEqual({ email: 'a@b.co', password: 'x' });
    const r = signInSchema.safeParse({ email: '', password: '' });
    expect(r.success ? {} : fieldErrors(r.error)).toEqual({ email: 'enter your e-mail address', password: 'enter your password' });
  });
});

describe('roles', () => {
  it('only admins manage users; viewers change nothing', () => {
    expect(ROLES.filter((r) => can(r, 'users.manage'))).toEqual(['admin']);
    for (const p of Object.keys(PERMISSIONS) as (keyof typeof PERMISSIONS)[])
      expect(can('viewer', p)).toBe(p === 'events.read' || p === 'tickets.read');
    // Door staff make scanner tokens and scan; nothing else.
    for (const p of Object.keys(PERMISSIONS) as (keyof typeof PERMISSIONS)[]) expect(can('scanner', p)).toBe(p === 'tickets.scan');
    expect(can('operator', 'warroom.control')).toBe(true);
    expect(can('promoter', 'warroom.control')).toBe(false);
    expect(can('operator', 'events.configure')).toBe(false);
  });

  it("a promoter sees only their organisation's events; the others see every event, house events included", () => {
    const house = { organisationId: null };
    const acme = { organisationId: 'org-acme' };
    expect(canSeeEvent({ role: 'promoter', organisationId: 'org-acme' }, acme)).toBe(true);
    expect(canSeeEvent({ role: 'promoter', organisationId: 'org-other' }, acme)).toBe(false);
    expect(canSeeEvent({ role: 'promoter', organisationId: 'org-acme' }, house)).toBe(false);
    for (const role of ['admin', 'operator', 'viewer'] as const) {
      expect(canSeeEvent({ role, organisationId: null }, house)).toBe(true);
      expect(canSeeEvent({ role, organisationId: null }, acme)).toBe(true);
    }
  });
});
