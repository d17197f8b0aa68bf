import { z } from 'zod';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './password';

const email = z.string().trim().toLowerCase().max(254).email('enter a valid email address');
const password = z
  .string()
  .min(MIN_PASSWORD_LENGTH, `use at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH, `use at most ${MAX_PASSWORD_LENGTH} characters`);

export const signUpBody = z.strictObject({
  email,
  password,
  name: z.string().trim().min(1).max(100).optional(),
  invitation: z.string().min(1).max(200).optional(),
});

export const signInBody = z.strictObject({ email, password: z.string().min(1).max(1_000) });

export const changePasswordBody = z.strictObject({
  current_password: z.string().min(1).max(1_000),
  new_password: password,
});
