import { boughtBy, type TopUpBuyer } from './bought-by';

const topUp: TopUpBuyer = { source: 'account' };

describe('boughtBy', () => {
  it.each<[string, Partial<TopUpBuyer>, string]>([
    [
      'a member',
      { created_by: 'usr_c', created_by_email: 'carol@example.com', api_key_id: 'key_1' },
      'carol@example.com',
    ],
    [
      'a member since removed',
      { created_by: 'usr_c', created_by_email: null, api_key_id: 'key_1' },
      'removed member',
    ],
    ['the operator', { source: 'operator', created_by: null, api_key_id: null }, 'operator'],
    ['a key of no person', { created_by: null, api_key_id: 'key_2' }, 'API'],
    ['a top-up from before', { created_by: null, api_key_id: null }, '—'],
    ['an older billing', {}, '—'],
  ])('%s', (_, fields, label) => {
    expect(boughtBy({ ...topUp, ...fields })).toBe(label);
  });
});
