"""Writes conversations.json: a tiny, seeded set of conversations with questions and the ids of
the turns that answer them. Run once; the output is committed (python3 make_conversations.py)."""
import json
import random

rng = random.Random(7)
PEOPLE = ["Alice", "Bruno", "Chiara", "Dmitri", "Esi", "Farid"]
CITIES = ["Lisbon", "Osaka", "Denver", "Nairobi", "Tallinn", "Recife", "Hobart", "Quebec"]
JOBS = ["nurse", "welder", "pilot", "baker", "translator", "geologist", "teacher", "chemist"]
PETS = [("cat", "Pixel"), ("dog", "Biscuit"), ("parrot", "Mango"), ("rabbit", "Clover"), ("turtle", "Sheldon"), ("hamster", "Nugget")]
HOBBIES = ["bouldering", "pottery", "chess", "sailing", "birdwatching", "salsa"]
FILLER = [
    "Haha that is so true, I laughed out loud.",
    "Anyway, how was your weekend?",
    "The weather has been strange lately.",
    "I made pasta again, nothing exciting.",
    "Did you watch the match last night?",
    "Work has been busy but fine.",
    "Let us catch up properly soon.",
    "I finally cleaned the garage.",
]
DAY = 86400


def conversation(cid, a, b):
    turns, questions = [], []
    t = 1_700_000_000
    n = 0

    def say(speaker, text):
        nonlocal n, t
        n += 1
        t += rng.randint(1, 3) * DAY
        tid = f"{cid}-t{n}"
        turns.append({"id": tid, "speaker": speaker, "text": text, "time": t})
        return tid

    # a changing fact: the latest statement is the answer (recency matters)
    cities = rng.sample(CITIES, 3)
    jobs = rng.sample(JOBS, 3)
    city_turns, job_turns = [], []
    pet_kind, pet_name = rng.choice(PETS)
    hobby = rng.choice(HOBBIES)
    plan = ["city", "filler", "job", "filler", "pet", "city", "filler", "hobby", "job", "filler", "city", "filler", "job", "filler"]
    for step in plan:
        if step == "city":
            c = cities[len(city_turns)]
            text = f"I moved to {c}, so I live in {c} now." if city_turns else f"I live in {c}, the apartment is small but bright."
            city_turns.append(say(a, text))
            say(b, f"{c} sounds lovely, send pictures!")
        elif step == "job":
            j = jobs[len(job_turns)]
            job_turns.append(say(a, f"Big news: my job is now {j}, I started this month."))
            say(b, f"A {j}? That suits you.")
        elif step == "pet":
            pet_turn = say(b, f"We adopted a {pet_kind} called {pet_name} last week.")
            say(a, f"{pet_name} is a great name for a {pet_kind}!")
        elif step == "hobby":
            hobby_turn = say(b, f"I have been getting into {hobby} on Saturdays.")
            say(a, f"I tried {hobby} once, it was harder than it looks.")
        else:
            say(rng.choice([a, b]), rng.choice(FILLER))
    questions.append({"id": f"{cid}-q1", "text": f"Where does {a} live now?", "evidence": [city_turns[-1]], "kind": "latest"})
    questions.append({"id": f"{cid}-q2", "text": f"What job does {a} have now?", "evidence": [job_turns[-1]], "kind": "latest"})
    questions.append({"id": f"{cid}-q3", "text": f"What is the name of {b}'s {pet_kind}?", "evidence": [pet_turn], "kind": "fact"})
    questions.append({"id": f"{cid}-q4", "text": f"Which hobby does {b} do on Saturdays?", "evidence": [hobby_turn], "kind": "fact"})
    questions.append({"id": f"{cid}-q5", "text": f"Which city did {a} live in first?", "evidence": [city_turns[0]], "kind": "first"})
    questions.append({"id": f"{cid}-q6", "text": f"What was {a}'s first job?", "evidence": [job_turns[0]], "kind": "first"})
    return {"id": cid, "turns": turns, "questions": questions}


convs = [conversation(f"c{i + 1}", *rng.sample(PEOPLE, 2)) for i in range(4)]
with open("conversations.json", "w") as f:
    json.dump({"conversations": convs}, f, indent=1)
    f.write("\n")
print(sum(len(c["questions"]) for c in convs), "questions,", sum(len(c["turns"]) for c in convs), "turns")
