import { useState, type FormEvent } from 'react';
import { useMutation, useQueryClient, useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { fieldErrors, ROLE_DESCRIPTIONS, ROLES, userCreateSchema, type Role } from '@onsale/shared/users/schema';
import { fieldErrorsOf, useTRPC } from '../../trpc';
import { Field } from '../-components/Field';
import { formatDateTime } from '../-components/format';
import { Forbidden } from '../-components/Status';

// Admins only. The BFF refuses everyone else on its own; this page only avoids showing them a form that would fail.
export const Route = createFileRoute('/_authed/users')({
  loader: ({ context: { trpc, queryClient, me } }) => {
    if (me.permissions.includes('users.manage')) return queryClient.ensureQueryData(trpc.users.list.queryOptions());
  },
  component: UsersPage,
});

function UsersPage() {
  const { me } = Route.useRouteContext();
  if (!me.permissions.includes('users.manage')) return <Forbidden what="page (console users are managed by admins)" />;
  return (
    <section>
      <h1>Console users</h1>
      <p className="muted">Who can sign in to this console, and what each may do.</p>
      <UserTable />
      <h2>New user</h2>
      <CreateUserForm />
    </section>
  );
}

function UserTable() {
  const trpc = useTRPC();
  const { data: users } = useSuspenseQuery(trpc.users.list.queryOptions());
  return (
    <table className="grid" data-testid="users-table">
      <thead>
        <tr>
          <th>E-mail</th>
          <th>Role</th>
          <th>Organisation</th>
          <th>Created</th>
          <th>By</th>
        </tr>
      </thead>
      <tbody>
        {users.map((u) => (
          <tr key={u.id} data-testid="user-row" data-email={u.email}>
            <td>{u.email}</td>
            <td data-testid="user-role">{u.role}</td>
            <td>{u.organisationName ?? '—'}</td>
            <td>
              <time dateTime={u.createdAt}>{formatDateTime(u.createdAt)}</time>
            </td>
            <td className="muted">{u.createdBy}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function CreateUserForm() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [role, setRole] = useState<Role>('viewer');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [created, setCreated] = useState<{ email: string; password: string | null } | null>(null);

  const create = useMutation(
    trpc.users.create.mutationOptions({
      onSuccess: async ({ user, generatedPassword }) => {
        setCreated({ email: user.email, password: generatedPassword });
        await queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
      },
      onError: (error) => {
        const fields = fieldErrorsOf(error);
        setErrors(fields);
        setFormError(Object.keys(fields).length ? null : error.message);
      },
    }),
  );

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const formEl = e.currentTarget;
    const form = new FormData(formEl);
    const input = {
      email: form.get('email'),
      role: form.get('role'),
      organisation: form.get('organisation') ?? '',
      password: form.get('password'),
    };
    // The same schema the BFF validates with: every problem shows at its field before anything is sent.
    const parsed = userCreateSchema.safeParse(input);
    setCreated(null);
    setFormError(null);
    if (!parsed.success) {
      setErrors(fieldErrors(parsed.error));
      return;
    }
    setErrors({});
    create.mutate(parsed.data, { onSuccess: () => formEl.reset() });
  }

  return (
    <form className="card form" onSubmit={submit} noValidate data-testid="create-user-form">
      <Field label="E-mail address" name="email" error={errors.email}>
        <input name="email" type="email" autoComplete="off" />
      </Field>
      <Field label="Role" name="role" error={errors.role} hint={ROLE_DESCRIPTIONS[role]}>
        <select name="role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
      </Field>
      {role === 'promoter' && (
        <Field label="Organisation" name="organisation" error={errors.organisation} hint="The promoter sees only this organisation's events; created if new.">
          <input name="organisation" type="text" autoComplete="organization" />
        </Field>
      )}
      <Field label="Password" name="password" error={errors.password} hint="At least 12 characters. Leave empty to generate one, shown once.">
        <input name="password" type="password" autoComplete="new-password" />
      </Field>
      {formError && (
        <p className="form-error" role="alert">
          {formError}
        </p>
      )}
      {created && (
        <p className="form-ok" role="status" data-testid="user-created">
          Created {created.email}.
          {created.password && (
            <>
              {' '}
              Their password, shown only now: <code data-testid="generated-password">{created.password}</code>
            </>
          )}
        </p>
      )}
      <button type="submit" className="primary" disabled={create.isPending}>
        {create.isPending ? 'Creating…' : 'Create user'}
      </button>
    </form>
  );
}
