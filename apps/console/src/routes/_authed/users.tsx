import { Fragment, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient, useSuspenseQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import type { RouterOutputs } from '@onsale/bff/root';
import { fieldErrors, ROLE_DESCRIPTIONS, ROLES, userCreateSchema, userRoleChangeSchema, type Role } from '@onsale/shared/users/schema';
import { actorWords, sentence } from '@onsale/shared/words';
import { fieldErrorsOf, messageOf, useTRPC } from '../../trpc';
import { ErrorSummary } from '../-components/ErrorSummary';
import { Field } from '../-components/Field';
import { Forbidden } from '../-components/Status';
import { When } from '../-components/When';
import { GridTable } from '../-components/GridTable';

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
      <p className="muted">
        Who can sign in to this console, and what each may do. Manage a user to change their role, reset their password, sign them out
        everywhere or disable them; every change is in the audit log.
      </p>
      <UserTable />
      <h2>New user</h2>
      <CreateUserForm />
    </section>
  );
}

type UserRow = RouterOutputs['users']['list'][number];

function UserTable() {
  const trpc = useTRPC();
  const { me } = Route.useRouteContext();
  const { data: users } = useSuspenseQuery(trpc.users.list.queryOptions());
  const [managing, setManaging] = useState<string | null>(null);
  return (
    <div className="table-scroll">
      <GridTable columns={['E-mail', 'Role', 'Organisation', 'Status', 'Created', 'By', '']} testId="users-table">
        {users.map((u) => (
          <Fragment key={u.id}>
            <tr data-testid="user-row" data-email={u.email} data-disabled={u.disabledAt ? 'true' : 'false'}>
              <td>{u.email}</td>
              <td data-testid="user-role">{u.role}</td>
              <td>{u.organisationName ?? '—'}</td>
              <td data-testid="user-status">
                {u.disabledAt ? (
                  <span className="status-off" title={`Disabled by ${actorWords(u.disabledBy ?? '')}`}>
                    Disabled <When iso={u.disabledAt} />
                  </span>
                ) : (
                  <span>
                    Active · {u.liveSessions} session{u.liveSessions === 1 ? '' : 's'}
                  </span>
                )}
              </td>
              <td>
                <When iso={u.createdAt} />
              </td>
              <td className="muted">{actorWords(u.createdBy)}</td>
              <td>
                {u.id === me.id ? (
                  <Link to="/account" className="muted">
                    Your account
                  </Link>
                ) : (
                  <button
                    type="button"
                    className="secondary small"
                    aria-expanded={managing === u.id}
                    aria-controls={`manage-${u.id}`}
                    onClick={() => setManaging(managing === u.id ? null : u.id)}
                    data-testid="user-manage"
                  >
                    {managing === u.id ? 'Close' : 'Manage'}
                  </button>
                )}
              </td>
            </tr>
            {managing === u.id && (
              <tr className="manage-row">
                <td colSpan={7} id={`manage-${u.id}`}>
                  <ManageUser user={u} />
                </td>
              </tr>
            )}
          </Fragment>
        ))}
      </GridTable>
    </div>
  );
}

/** One user's admin actions: role, password reset, sign out everywhere, disable or enable; each says what it did. */
function ManageUser({ user }: { user: UserRow }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [role, setRole] = useState<Role>(user.role);
  const [organisation, setOrganisation] = useState(user.organisationName ?? '');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [done, setDone] = useState<string | null>(null);
  const [password, setPassword] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
  const onError = (error: unknown) => {
    const fields = fieldErrorsOf(error);
    setDone(null);
    setErrors(Object.keys(fields).length ? fields : { form: messageOf(error, { change: true }) });
  };
  const ok = (message: string) => {
    setErrors({});
    setDone(message);
    void refresh();
  };
  const changeRole = useMutation(
    trpc.users.changeRole.mutationOptions({
      onSuccess: (u) => ok(`${u.email} is now ${u.role}${u.organisationName ? ` of ${u.organisationName}` : ''}.`),
      onError,
    }),
  );
  const reset = useMutation(
    trpc.users.resetPassword.mutationOptions({
      onSuccess: (r) => {
        setPassword(r.generatedPassword);
        ok(`Password reset; ${r.sessionsEnded} session(s) ended.`);
      },
      onError,
    }),
  );
  const signOut = useMutation(
    trpc.users.signOutEverywhere.mutationOptions({
      onSuccess: (r) => ok(`Signed out everywhere: ${r.sessionsEnded} session(s) ended.`),
      onError,
    }),
  );
  const disable = useMutation(
    trpc.users.disable.mutationOptions({
      onSuccess: (r) => ok(`Disabled; ${r.sessionsEnded} session(s) ended. They cannot sign in until enabled.`),
      onError,
    }),
  );
  const enable = useMutation(trpc.users.enable.mutationOptions({ onSuccess: () => ok('Enabled: they can sign in again.'), onError }));

  function submitRole(e: FormEvent) {
    e.preventDefault();
    const parsed = userRoleChangeSchema.safeParse({ userId: user.id, role, organisation: role === 'promoter' ? organisation : '' });
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    changeRole.mutate(parsed.data);
  }
  const { form: formError, ...fieldErrs } = errors;

  return (
    <div className="manage" data-testid="manage-user">
      <ErrorSummary errors={fieldErrs} labels={{ role: 'Role', organisation: 'Organisation', userId: 'User' }} />
      <form className="manage-role" onSubmit={submitRole} noValidate>
        <Field label="Role" name={`role`} error={errors.role} hint={ROLE_DESCRIPTIONS[role]}>
          <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </Field>
        {role === 'promoter' && (
          <Field label="Organisation" name="organisation" error={errors.organisation}>
            <input value={organisation} onChange={(e) => setOrganisation(e.target.value)} />
          </Field>
        )}
        <button type="submit" className="primary" disabled={changeRole.isPending} data-testid="user-change-role">
          Change role
        </button>
      </form>
      <div className="page-actions">
        <button
          type="button"
          className="secondary"
          onClick={() => reset.mutate({ userId: user.id })}
          disabled={reset.isPending}
          data-testid="user-reset-password"
        >
          Reset password
        </button>
        <button
          type="button"
          className="secondary"
          onClick={() => signOut.mutate({ userId: user.id })}
          disabled={signOut.isPending}
          data-testid="user-sign-out-everywhere"
        >
          Sign out everywhere
        </button>
        {user.disabledAt ? (
          <button
            type="button"
            className="secondary"
            onClick={() => enable.mutate({ userId: user.id })}
            disabled={enable.isPending}
            data-testid="user-enable"
          >
            Enable
          </button>
        ) : (
          <button
            type="button"
            className="secondary danger"
            onClick={() => disable.mutate({ userId: user.id })}
            disabled={disable.isPending}
            data-testid="user-disable"
          >
            Disable
          </button>
        )}
      </div>
      {formError && (
        <p className="form-error" role="alert" data-testid="manage-error">
          {sentence(formError)}
        </p>
      )}
      {done && (
        <p className="form-ok" role="status" data-testid="manage-done">
          {done}
          {password && (
            <>
              {' '}
              Their new password, shown only now: <code data-testid="reset-password">{password}</code>
            </>
          )}
        </p>
      )}
    </div>
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
        setFormError(Object.keys(fields).length ? null : messageOf(error, { change: true }));
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
      <ErrorSummary
        errors={errors}
        labels={{ email: 'E-mail address', role: 'Role', organisation: 'Organisation', password: 'Password' }}
      />
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
        <Field
          label="Organisation"
          name="organisation"
          error={errors.organisation}
          hint="The promoter sees only this organisation's events; created if new."
        >
          <input name="organisation" type="text" autoComplete="organization" />
        </Field>
      )}
      <Field
        label="Password"
        name="password"
        error={errors.password}
        hint="At least 12 characters and hard to guess (not built from their e-mail; a few unrelated words work well): a weak one is refused with the reason. Leave empty to generate one, shown once."
      >
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
