import { planPicker, planOfValue } from './plan-picker';

const NAMES = { free: 'Free', starter: 'Starter', enterprise: 'Enterprise' };

describe('planPicker', () => {
  it('shows an enterprise account read-only: the page cannot express its contract', () => {
    expect(planPicker({ type: 'team', plan: 'enterprise' }, undefined, NAMES)).toEqual({
      editable: false,
      options: [],
      value: 'enterprise',
      canApply: false,
    });
  });

  it('shows a team without a plan as "No plan", Apply only once another plan is chosen', () => {
    const untouched = planPicker({ type: 'team', plan: null }, undefined, NAMES);
    expect(untouched).toMatchObject({ editable: true, value: '', canApply: false });
    expect(untouched.options).toEqual([
      { value: '', label: 'No plan' },
      { value: 'free', label: 'Free' },
      { value: 'starter', label: 'Starter' },
    ]);
    expect(planPicker({ type: 'team', plan: null }, 'free', NAMES)).toMatchObject({
      value: 'free',
      canApply: true,
    });
    expect(planPicker({ type: 'team', plan: 'starter' }, '', NAMES)).toMatchObject({
      value: '',
      canApply: true,
    });
  });

  it('offers an individual account its plans but neither "No plan" nor enterprise', () => {
    const picker = planPicker({ type: 'individual', plan: 'free' }, undefined, NAMES);
    expect(picker).toMatchObject({ editable: true, value: 'free', canApply: false });
    expect(picker.options.map((o) => o.value)).toEqual(['free', 'starter']);
    expect(planPicker({ type: 'individual', plan: 'free' }, 'starter', NAMES).canApply).toBe(true);
    expect(planPicker({ type: 'individual', plan: 'free' }, 'free', NAMES).canApply).toBe(false);
  });

  it('sends null for "No plan"', () => {
    expect([planOfValue(''), planOfValue('starter')]).toEqual([null, 'starter']);
  });
});
