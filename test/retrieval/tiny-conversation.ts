import type {Conversation} from '../../src/data/conversations/types.js'

export const DAY = 86_400_000
export const T0 = Date.UTC(2023, 0, 1)

/** Two sessions ten days apart; Ann's sister Cleo is named in one session and her job in the next. */
export const conversation: Conversation = {
  id: 'c',
  sessions: [
    {id: '1', time: T0},
    {id: '2', time: T0 + 10 * DAY},
  ],
  turns: [
    {id: 'D1:1', session: '1', speaker: 'Ann', time: T0, text: 'My sister Cleo lives in Porto near the harbor.'},
    {id: 'D1:2', session: '1', speaker: 'Bo', time: T0, text: 'Porto sounds lovely, I want to visit.'},
    {id: 'D1:3', session: '1', speaker: 'Ann', time: T0, text: 'Thanks so much!'},
    {id: 'D2:1', session: '2', speaker: 'Bo', time: T0 + 10 * DAY, text: 'How is the pottery class going?'},
    {
      id: 'D2:2',
      session: '2',
      speaker: 'Ann',
      time: T0 + 10 * DAY,
      text: 'Cleo got hired as a chemist at a water lab.',
    },
    {id: 'D2:3', session: '2', speaker: 'Bo', time: T0 + 10 * DAY, text: 'I bought a chemist kit for my nephew.'},
  ],
}
