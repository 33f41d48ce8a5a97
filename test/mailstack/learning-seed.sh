# The seed corpus of the learning filter (MAILSTACK_LEARNING=1), sourced by learning-filter.sh.
# Written here, not copied from anywhere, and the same on every start: SEED_COUNT ham letters
# between colleagues of organisations outside any pool, and SEED_COUNT spam letters. Both share
# the greetings, openings and sign-offs of ordinary mail, so those tokens stay neutral in Bayes
# and a few rescues cannot make them look like ham; what tells the classes apart is the matter of
# the letter (work in hand vs offers, prizes, urgent account notices).

SEED_COUNT=40
SEED_GREETINGS=("Hi" "Hello" "Dear" "Good morning" "Hey")
SEED_NAMES=("Anna" "Ben" "Chloe" "David" "Elena" "Felix" "Grace" "Hugo" "Ines" "Jonas" "Karin")
SEED_OPENINGS=("I hope you are well." "Thanks for your message." "Just a quick note." "Following up on last week." "Sorry for the late reply." "As promised, here is the update.")
SEED_CLOSINGS=("Best regards" "Thanks" "Kind regards" "Cheers" "Best wishes")
SEED_HAM=(
  "The minutes of Tuesday's steering meeting are in the shared folder."
  "I moved our sync to Thursday at ten, room 4B, if that still works for you."
  "Could you look over my notes on the migration before the call next week?"
  "The build on the staging server failed again after the schema change."
  "Marta will cover the support rota while I am on leave next week."
  "The supplier confirmed delivery of the replacement laptops for Monday."
  "I added my comments on the onboarding checklist as suggestions."
  "The client asked whether we can split the invoice over two months."
  "Please send me your travel dates so I can book the hotel for the workshop."
  "I merged the fix for the export bug; it goes out with Friday's release."
  "Facilities say the heating on the third floor is fixed now."
  "Can we postpone our one-to-one until after the audit?"
)
# Half of the spam is cold business outreach and phishing in the words of ordinary work mail
# (meetings, drafts, invoices, next week): the kind of mail a cold sender's first letters are
# judged against, so that ordinary business words alone do not say ham.
SEED_SPAM=(
  "You have been selected to receive a cash reward of 5,000 USD."
  "Quick question: who looks after the budget for your marketing team this year?"
  "Lowest mortgage rates guaranteed, apply today with no credit check."
  "We help teams like yours halve their review time; can we schedule a call next week?"
  "Your account will be suspended unless you verify your password here."
  "Following up on my last email: would Thursday or Friday work for a short demo?"
  "Our crypto trading robot doubled investors' money in one month."
  "Please find the overdue invoice attached; payment is required today to avoid fees."
  "Congratulations, you are our lucky winner of a brand new phone."
  "I put together a free report on your website's ranking; shall I send the draft over?"
  "Urgent: confirm your bank details to release the pending transfer."
  "Let me know if you are the right person to talk to about your plans for the quarter."
)

# seed_letter ham|spam N: the N-th letter of a class, as a message file on stdout
seed_letter() {
  local class="$1" n="$2" body from subject
  local greet="${SEED_GREETINGS[$((n % ${#SEED_GREETINGS[@]}))]}"
  local name="${SEED_NAMES[$(((n * 3) % ${#SEED_NAMES[@]}))]}"
  local opening="${SEED_OPENINGS[$(((n * 5) % ${#SEED_OPENINGS[@]}))]}"
  local closing="${SEED_CLOSINGS[$(((n * 7) % ${#SEED_CLOSINGS[@]}))]}"
  local signer="${SEED_NAMES[$(((n * 5 + 1) % ${#SEED_NAMES[@]}))]}"
  if [ "$class" = ham ]; then
    local -n lines=SEED_HAM
    from="${signer,,}@partner-$((n % 9)).example"
  else
    local -n lines=SEED_SPAM
    from="${signer,,}@offers-$((n % 9)).example"
  fi
  local a="${lines[$((n % ${#lines[@]}))]}" b="${lines[$(((n * 5 + 3) % ${#lines[@]}))]}"
  subject="${a%.}"
  printf 'From: %s <%s>\nTo: %s@example.org\nSubject: %s\nDate: Mon, %02d Jan 2023 08:%02d:00 +0000\n' \
    "$signer" "$from" "${name,,}" "${subject:0:60}" $((n % 28 + 1)) $((n % 60))
  printf 'Message-ID: <seed-%s-%04d@%s>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\n' \
    "$class" "$n" "${from#*@}"
  printf '%s %s,\n\n%s %s\n%s\n\n%s,\n%s\n' "$greet" "$name" "$opening" "$a" "$b" "$closing" "$signer"
}

# seed_corpus DIR: DIR/ham and DIR/spam, SEED_COUNT letters each
seed_corpus() {
  local dir="$1" class n
  for class in ham spam; do
    mkdir -p "$dir/$class"
    for ((n = 0; n < SEED_COUNT; n++)); do seed_letter "$class" "$n" > "$dir/$class/$n.eml"; done
  done
}
