/**
 * Word lists of the synthetic memory generator. Invented names and everyday facts: nothing is
 * taken from LoCoMo or any other dataset.
 */
export const FIRST_NAMES = [
  'Ada',
  'Bruno',
  'Carmen',
  'Dario',
  'Elena',
  'Felix',
  'Greta',
  'Hugo',
  'Ines',
  'Jonas',
  'Kira',
  'Luca',
  'Maya',
  'Nico',
  'Olga',
  'Pavel',
  'Rosa',
  'Samir',
  'Tessa',
  'Umar',
  'Vera',
  'Wes',
  'Yara',
  'Zane',
  'Lena',
  'Omar',
  'Priya',
  'Theo',
  'Nadia',
  'Emil',
]

export const RELATIONS = ['sister', 'brother', 'cousin', 'neighbor', 'colleague', 'roommate', 'aunt', 'uncle'] as const

export const CITIES = [
  'Porto',
  'Lisbon',
  'Denver',
  'Austin',
  'Leeds',
  'Glasgow',
  'Osaka',
  'Quebec',
  'Tucson',
  'Bergen',
  'Valencia',
  'Krakow',
  'Halifax',
  'Adelaide',
]

/** Jobs with a workplace phrase. */
export const JOBS: ReadonlyArray<readonly [string, string]> = [
  ['nurse', 'at the county hospital'],
  ['chemist', 'at a water lab'],
  ['teacher', 'at a middle school'],
  ['carpenter', 'for a small furniture shop'],
  ['accountant', 'at a logistics firm'],
  ['baker', 'at a bakery downtown'],
  ['pharmacist', 'at a corner pharmacy'],
  ['librarian', 'at the public library'],
  ['electrician', 'for a solar installer'],
  ['translator', 'for a publishing house'],
  ['paramedic', 'with the city ambulance service'],
  ['gardener', 'at the botanical garden'],
]

/** Pets: kind and names. */
export const PET_KINDS = ['dog', 'cat', 'parrot', 'rabbit', 'turtle', 'hamster']
export const PET_NAMES = [
  'Biscuit',
  'Pepper',
  'Mochi',
  'Rocket',
  'Juniper',
  'Waffles',
  'Nova',
  'Pickles',
  'Ziggy',
  'Clover',
]

/**
 * Hobbies: the activity as a speaker mentions it, an object they made or did, and an inference
 * topic (a related interest a question can ask about without repeating the activity's words).
 */
export const HOBBIES: ReadonlyArray<{activity: string; start: string; made: string; related: string}> = [
  {
    activity: 'pottery',
    start: 'signed up for a pottery class',
    made: 'threw a lopsided clay mug on the wheel',
    related: 'a ceramics museum',
  },
  {
    activity: 'rock climbing',
    start: 'joined a rock climbing gym',
    made: 'finally topped out on the overhang route',
    related: 'a bouldering trip',
  },
  {
    activity: 'birdwatching',
    start: 'bought binoculars for birdwatching',
    made: 'spotted a kingfisher by the river',
    related: 'a nature reserve tour',
  },
  {
    activity: 'baking sourdough',
    start: 'started baking sourdough',
    made: 'pulled a loaf with a perfect crust out of the oven',
    related: 'a bread festival',
  },
  {
    activity: 'chess',
    start: 'joined a chess club',
    made: 'won three games in the club tournament',
    related: 'a strategy board game night',
  },
  {
    activity: 'salsa dancing',
    start: 'took my first salsa dancing lesson',
    made: 'danced a whole song without stepping on toes',
    related: 'a Latin music concert',
  },
  {
    activity: 'woodworking',
    start: 'set up a woodworking bench in the garage',
    made: 'built a walnut bookshelf',
    related: 'a furniture design fair',
  },
  {
    activity: 'photography',
    start: 'got a secondhand film camera for photography',
    made: 'developed a roll of harbor shots',
    related: 'a gallery opening',
  },
  {
    activity: 'gardening',
    start: 'planted a vegetable patch',
    made: 'harvested the first tomatoes',
    related: 'a seed swap market',
  },
  {
    activity: 'running',
    start: 'started training for a 10k run',
    made: 'ran the river loop in under an hour',
    related: 'a marathon',
  },
]

/** Everyday small talk: openers, replies and fillers with varied vocabulary (the distractors). */
export const OPENERS = [
  'Hey {other}! How have you been?',
  'Hi {other}, long time no talk!',
  'Good to hear from you, {other}. What is new?',
  'Morning {other}! Got a minute to catch up?',
  '{other}! I was just thinking about you.',
]

export const OPENER_REPLIES = [
  'Doing well, thanks! Busy as always.',
  'Hey! Good to hear from you, things are fine here.',
  'Hi! It has been a while, I have lots to tell you.',
  'All good on my side, just a bit tired.',
  'Oh hi! Perfect timing, I was about to text you.',
]

export const REPLIES = [
  'That sounds wonderful, I am happy for you.',
  'Wow, I did not expect that at all!',
  'How did that make you feel?',
  'That must have taken a lot of courage.',
  'Nice! Tell me more about it.',
  'Oh no, that sounds stressful.',
  'I love hearing about this stuff.',
  'You always find the best things to do.',
  'Ha, that is so typical of you.',
  'Sounds like a busy couple of weeks.',
]

export const FILLERS = [
  'The weather has been gray and rainy all week, so I mostly stayed in.',
  'I tried a new noodle place near the station and it was decent.',
  'Work has been hectic with all the end of quarter reports.',
  'I binge watched a documentary series about deep sea creatures.',
  'My phone screen cracked again, third time this year.',
  'We had a long dinner with friends and talked until midnight.',
  'I finally cleaned out the closet and donated two bags of clothes.',
  'Traffic on the bridge was terrible this morning.',
  'I have been drinking way too much coffee lately.',
  'The neighbors are renovating and the drilling starts at seven.',
  'I read a mystery novel in one sitting over the weekend.',
  'My knee has been sore, so I am taking it easy.',
  'We are planning a small picnic if the sun ever comes out.',
  'I started a budget spreadsheet to track groceries.',
  'The power went out for a few hours on Tuesday.',
  'I caught a cold and spent two days on the couch with soup.',
  'A street market opened on our block with fresh fruit every Saturday.',
  'I rearranged the living room and it feels bigger now.',
  'My favorite cafe raised its prices again.',
  'I am trying to go to bed earlier, with mixed results.',
]

export const CLOSERS = [
  'Talk soon, take care!',
  'Let us catch up again next week.',
  'I have to run, bye for now!',
  'Great chatting, see you!',
]
