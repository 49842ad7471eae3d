import { useEffect, useRef, useState, type FormEvent } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, redirect, useNavigate } from '@tanstack/react-router';
import { z } from 'zod';
import { fieldErrors, signInSchema } from '@onsale/shared/users/schema';
import { domainCodeOf, fieldErrorsOf, messageOf, useTRPC } from '../trpc';
import { Field } from './-components/Field';

// Only a path of this console is a place to come back to; anything else (another origin, `//host`) is dropped.
const searchSchema = z.object({
  redirect: z
    .string()
    .regex(/^\/(?!\/)/)
    .optional()
    .catch(undefined),
});

export const Route = createFileRoute('/sign-in')({
  validateSearch: (search) => searchSchema.parse(search),
  beforeLoad: async ({ context: { trpc, queryClient }, search }) => {
    const me = await queryClient.ensureQueryData(trpc.auth.me.queryOptions());
    if (me) throw redirect({ href: search.redirect ?? '/' });
  },
  component: SignInPage,
});

function SignInPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const { redirect: back } = Route.useSearch();
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [formError, setFormError] = useState<string | null>(null);
  const formRef = useRef<HTMLFormElement>(null);
  // After a refusal, focus goes back to the field to correct (its error is read out with it), not to the page top.
  const [focusOn, setFocusOn] = useState<{ field: 'email' | 'password'; n: number } | null>(null);
  useEffect(() => {
    if (!focusOn) return;
    const input = formRef.current?.elements.namedItem(focusOn.field);
    if (input instanceof HTMLInputElement) {
      input.focus();
      input.select();
    }
  }, [focusOn]);
  const focusField = (field: 'email' | 'password') => setFocusOn((f) => ({ field, n: (f?.n ?? 0) + 1 }));

  const signIn = useMutation(
    trpc.auth.signIn.mutationOptions({
      onSuccess: async (me) => {
        queryClient.setQueryData(trpc.auth.me.queryKey(), me);
        await navigate({ href: back ?? '/', replace: true });
      },
      onError: (error) => {
        if (domainCodeOf(error) === 'INVALID_CREDENTIALS') {
          setFormError('Wrong e-mail address or password.');
          focusField('password');
          return;
        }
        if (domainCodeOf(error) === 'SIGN_IN_THROTTLED') {
          // Locked out for a while (too many failures for this e-mail or from this network): the BFF's words say how long.
          setErrors({});
          setFormError(`${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`);
          focusField('email');
          return;
        }
        if (domainCodeOf(error) === 'USER_DISABLED') {
          setFormError('This user is disabled. Ask an admin of this console to enable it.');
          focusField('email');
          return;
        }
        const fields = fieldErrorsOf(error);
        setErrors(fields);
        setFormError(Object.keys(fields).length ? null : `Could not sign in: ${messageOf(error)}`);
        focusField(fields.email ? 'email' : 'password');
      },
    }),
  );

  function submit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    // The schema the BFF checks with: a blank field is caught here, at the field, without a round trip.
    const parsed = signInSchema.safeParse({ email: form.get('email'), password: form.get('password') });
    setFormError(null);
    if (!parsed.success) {
      const fields = fieldErrors(parsed.error);
      setErrors(fields);
      focusField(fields.email ? 'email' : 'password');
      return;
    }
    setErrors({});
    signIn.mutate(parsed.data);
  }

  return (
    <main className="sign-in">
      <form ref={formRef} className="card" onSubmit={submit} noValidate aria-labelledby="sign-in-title" data-testid="sign-in-form">
        <h1 id="sign-in-title">Onsale console</h1>
        <p className="muted">Sign in with the e-mail address your administrator registered.</p>
        <Field label="E-mail address" name="email" error={errors.email}>
          <input name="email" type="email" autoComplete="username" autoFocus />
        </Field>
        <Field label="Password" name="password" error={errors.password}>
          <input name="password" type="password" autoComplete="current-password" />
        </Field>
        {formError && (
          <p className="form-error" role="alert" id="sign-in-error" data-testid="sign-in-error">
            {formError}
          </p>
        )}
        <button type="submit" className="primary" disabled={signIn.isPending}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
