import { useRef, useState, type FormEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { fieldErrors, ownPasswordChangeSchema, ROLE_DESCRIPTIONS } from '@onsale/shared/users/schema';
import { fieldErrorsOf, messageOf, useTRPC } from '../../trpc';
import { ErrorSummary } from '../-components/ErrorSummary';
import { Field } from '../-components/Field';
import { When } from '../-components/When';

// Every signed-in user: who they are, and a change of their own password.
export const Route = createFileRoute('/_authed/account')({
  component: AccountPage,
});

function AccountPage() {
  const { me } = Route.useRouteContext();
  return (
    <section>
      <h1>Your account</h1>
      <dl className="kv card" data-testid="account-facts">
        <dt>E-mail address</dt>
        <dd>{me.email}</dd>
        <dt>Role</dt>
        <dd>
          {me.role}
          {me.organisationName ? ` of ${me.organisationName}` : ''}: {ROLE_DESCRIPTIONS[me.role]}
        </dd>
        <dt>This session ends</dt>
        <dd>
          <When iso={me.sessionExpiresAt} />
        </dd>
      </dl>
      <h2>Change your password</h2>
      <ChangePassword />
    </section>
  );
}

function ChangePassword() {
  const trpc = useTRPC();
  const formRef = useRef<HTMLFormElement>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [done, setDone] = useState<string | null>(null);
  const change = useMutation(
    trpc.users.changeOwnPassword.mutationOptions({
      onSuccess: (r) => {
        setErrors({});
        formRef.current?.reset();
        setDone(
          `Password changed. ${r.otherSessionsEnded > 0 ? `Your ${r.otherSessionsEnded} other session(s) were signed out; this one stays.` : 'You had no other sessions.'}`,
        );
      },
      onError: (error) => {
        const fields = fieldErrorsOf(error);
        setErrors(Object.keys(fields).length ? fields : { currentPassword: messageOf(error, { change: true }) });
      },
    }),
  );

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    setDone(null);
    const form = new FormData(e.currentTarget);
    const parsed = ownPasswordChangeSchema.safeParse({
      currentPassword: form.get('currentPassword'),
      newPassword: form.get('newPassword'),
    });
    if (!parsed.success) return setErrors(fieldErrors(parsed.error));
    setErrors({});
    change.mutate(parsed.data);
  }

  return (
    <form ref={formRef} className="card form" onSubmit={submit} noValidate data-testid="change-password-form">
      <ErrorSummary errors={errors} labels={{ currentPassword: 'Current password', newPassword: 'New password' }} />
      <Field label="Current password" name="currentPassword" error={errors.currentPassword}>
        <input name="currentPassword" type="password" autoComplete="current-password" />
      </Field>
      <Field
        label="New password"
        name="newPassword"
        error={errors.newPassword}
        hint="At least 12 characters and hard to guess (not built from your e-mail; a few unrelated words work well): a weak one is refused with the reason. Your other sessions are signed out."
      >
        <input name="newPassword" type="password" autoComplete="new-password" />
      </Field>
      {done && (
        <p className="form-ok" role="status" data-testid="password-changed">
          {done}
        </p>
      )}
      <button type="submit" className="primary" disabled={change.isPending}>
        {change.isPending ? 'Changing…' : 'Change password'}
      </button>
    </form>
  );
}
