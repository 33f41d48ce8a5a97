/*
 * The mail the engine sends when a workspace has no templates of its own: short, ordinary notes
 * between colleagues who know each other. Nothing that reads like marketing (no sales words, no
 * links, no prices or percentages, no shouting), because warmup mail has to look like the mail
 * real people get answers to. Spintax varies greetings and phrasing so no two messages match.
 *
 * `{topic}` is filled from TOPICS / TOPICS_BY_LANGUAGE and `{company}` from COMPANIES. Templates
 * place `{topic}` only where any topic of their language fits the grammar: German ones after
 * `über` / `für` / `um` (accusative; topics are feminine, neuter or plural, so the article does
 * not change), French after `sur` / `pour` (no contraction with `le`), Spanish after `sobre` /
 * `para` / `con`. `{day_of_week}` and `{date}` are the day of sending, so templates use them
 * as "today". Replies are written to answer any initial message; the engine sends them with the
 * original subject, prefixed "Re:".
 */

import type { TemplateType } from './templates.schemas.js';

export interface DefaultTemplate {
  name: string;
  type: TemplateType;
  /** ISO 639-1, lower case. */
  language: string;
  subject: string;
  body: string;
}

/** Paragraphs joined by a blank line. */
const body = (...paragraphs: string[]): string => paragraphs.join('\n\n');

const en = (type: TemplateType, name: string, subject: string, ...paragraphs: string[]): DefaultTemplate => ({
  name,
  type,
  language: 'en',
  subject,
  body: body(...paragraphs),
});
const de = (type: TemplateType, name: string, subject: string, ...paragraphs: string[]): DefaultTemplate => ({
  name,
  type,
  language: 'de',
  subject,
  body: body(...paragraphs),
});
const fr = (type: TemplateType, name: string, subject: string, ...paragraphs: string[]): DefaultTemplate => ({
  name,
  type,
  language: 'fr',
  subject,
  body: body(...paragraphs),
});
const es = (type: TemplateType, name: string, subject: string, ...paragraphs: string[]): DefaultTemplate => ({
  name,
  type,
  language: 'es',
  subject,
  body: body(...paragraphs),
});

const HI = '{Hi|Hello|Hey} {recipient_first_name},';
const HELLO = '{Hi|Hello} {recipient_first_name},';
const HALLO = '{Hallo|Hi} {recipient_first_name},';
const BONJOUR_TU = '{Bonjour|Salut} {recipient_first_name},';
const BONJOUR_VOUS = 'Bonjour {recipient_first_name},';
const HOLA = '{Hola|Buenas} {recipient_first_name},';

const ENGLISH: DefaultTemplate[] = [
  // initial
  en(
    'initial',
    'Quick question about a topic',
    '{Quick question|A question} about {topic}',
    HI,
    '{Do you have|Would you have} a few minutes this week to talk through {topic}? I would like to hear your view before we settle on the next steps. {Any time after lunch works for me.|I am fairly flexible on timing.}',
    '{Thanks|Best|Cheers},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Draft ready for review',
    '{Could you look over the draft?|Draft for {topic}}',
    HELLO,
    "I've put together a first draft for {topic} and saved it in the shared folder. It's still rough in places, especially the part about timing. {No rush, but|If you can,} any comments by {the end of the week|early next week} would help a lot.",
    '{Thanks|Thanks a lot|Many thanks},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Notes after a call',
    "Notes from {today's|our} call",
    HELLO,
    "Thanks for taking the time {today|earlier}. {Here is a short summary|A quick recap} of where we landed on {topic}: we keep the current timeline, I'll update the plan, and we check in again next week. Let me know if I missed anything.",
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Thank you note',
    '{Thank you|Thanks}',
    '{Hi|Hey} {recipient_first_name},',
    'Just a quick note to say thanks for your help with {topic}. It made {this week|the last few days} a lot easier. {I owe you a coffee.|Coffee is on me next time!}',
    '{Cheers|Thanks again|Best},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Finding time for a call',
    '{Time for a short call next week?|Short call next week?}',
    HELLO,
    'Could we find {half an hour|thirty minutes} next week to go through {topic}? Tuesday or Wednesday afternoon would suit me best, but I can work around your calendar. {Just send me a time that works.|Let me know what suits you.}',
    '{Thanks|Best regards|Best},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Introducing a colleague',
    '{Introducing Sam|Meet Sam from our team}',
    HELLO,
    "I'd like to introduce you to Sam, who joined our team {last month|recently} and will be working on {topic} with us. Sam has run a few projects like this before, and I think the two of you should talk. {Would you have time for a short coffee with Sam next week?|I've suggested that Sam get in touch with you directly.}",
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Starting to plan',
    'Planning for {topic}',
    HI,
    "I'm starting to plan {topic} and wanted to check a couple of things with you first. Who else should be involved from your side? And is there a date we need to work back from? {Once I know that, I'll put together a rough schedule.|I'll draft a rough schedule once I hear back.}",
    '{Thanks|Best},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Catching up',
    '{Catching up|Long time no talk}',
    HI,
    "{I hope your {day_of_week} is going well.|Hope you're having a good {day_of_week}.} It's been a while since we last spoke, and I'd like to hear how things are going with {topic}. Do you have time for a quick call {later this week|sometime next week}?",
    '{Best|Talk soon|Cheers},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Agenda for a meeting',
    'Agenda for our meeting on {topic}',
    HELLO,
    "I'm putting together the agenda for our meeting on {topic}. Is there anything you'd like to add, or anything we should leave for another time? I'd like to send it round {tomorrow|by the end of the day}.",
    '{Thanks|Best},\n{sender_first_name}',
  ),
  en(
    'initial',
    'After a call with a client',
    'Our call with {company}',
    HELLO,
    'I had a good call with the team at {company} {this morning|earlier today}. They are happy with how things are going and would like to talk about {topic} in more detail next month. Could you join that conversation? {I think your input would be really useful.|You know that part better than anyone.}',
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Away for a few days',
    '{Away next week|Out of the office next week}',
    HELLO,
    "{Just a heads-up|A quick heads-up}: I'll be out of the office for a few days next week. If anything comes up on {topic}, Maria knows where things stand and can help. I'll be back on the Monday after.",
    '{Thanks|Best},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Room booked for a workshop',
    '{Room booked for the workshop|Workshop room}',
    HELLO,
    "I've booked the large meeting room for the workshop on {topic}. It holds about twelve people, so there should be enough space for both teams. Could you let me know if you need a screen or anything else set up?",
    '{Thanks|Best},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Updated figures',
    'Updated figures for {topic}',
    HELLO,
    "I've updated the figures for {topic} and saved them next to last month's version. Most of it looks as expected. A couple of lines moved more than I thought they would, though. {Could we go through them together when you have a moment?|Happy to walk you through them if that helps.}",
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Feedback on slides',
    '{Your thoughts on the slides|Slides for {topic}}',
    '{Hi|Hey} {recipient_first_name},',
    "I've finished the slides for {topic} and would really like your honest opinion before I present them. Is the story clear, and is there anything you would cut? Even a few quick comments would help.",
    '{Thanks|Thanks in advance},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Lunch next week',
    'Lunch next week?',
    '{Hi|Hey} {recipient_first_name},',
    "{It's been too long since we caught up.|We haven't caught up in a while.} Would you like to get lunch together next week? I'd also be curious to hear how {topic} is coming along.",
    '{Cheers|Best},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Short status update',
    'Update on {topic}',
    HELLO,
    "A short update on {topic}: we're on track, and the open questions from last week are mostly settled. I'll share a fuller summary {early next week|in the next few days}. {Shout if you need anything before then.|Let me know if you need anything before then.}",
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Workshop notes',
    'Notes from the workshop, {date}',
    HELLO,
    "Here is a short summary of today's session on {topic}. We agreed to keep the scope as it is and to look at the schedule again in two weeks. Anna will collect the open questions in the meantime. {If I got something wrong, just reply here.|Please add anything I left out.}",
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'initial',
    'Checking one detail',
    '{One detail|Small question} on {topic}',
    HI,
    'While reading through the notes on {topic}, I noticed the start date is different in two places. Do you know which one is right? {I want to make sure we all plan with the same date.|I would rather fix it now than later.}',
    '{Thanks|Cheers},\n{sender_first_name}',
  ),

  // reply
  en(
    'reply',
    'Will look at it soon',
    'Re: {topic}',
    HELLO,
    "Thanks for your note. I'll have a proper look {later today|tomorrow morning} and get back to you.",
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Makes sense',
    'Re: {topic}',
    HELLO,
    "Thanks for letting me know. That all makes sense to me, and I'm happy to help where I can.",
    '{Best|Cheers},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Busy today, more tomorrow',
    'Re: {topic}',
    '{Hi|Hey} {recipient_first_name},',
    "Good to hear from you. I'm tied up for the rest of {day_of_week}, but I'll reply properly tomorrow.",
    '{Best|Talk soon},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Very helpful',
    'Re: {topic}',
    HELLO,
    "Thanks, {this is really helpful|that's really useful}. I'll share it with the rest of the team and let you know if we have any questions.",
    '{Best|Thanks again},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Got it',
    'Re: {topic}',
    '{Hi|Hey} {recipient_first_name},',
    "Got it, thank you. I've put it on my list for {this week|the next few days}.",
    '{Cheers|Best},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Discuss at next check-in',
    'Re: {topic}',
    HELLO,
    'Thanks for the heads-up on {topic}. Shall we go through it at our next check-in? {That would give me time to read up on it first.|I have a couple of thoughts I would like to share.}',
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Sounds good',
    'Re: {topic}',
    HI,
    'Sounds good to me. Let me know if you need anything else from my side.',
    '{Best|Cheers},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Mostly agree',
    'Re: {topic}',
    'Thanks {recipient_first_name},',
    "I agree with most of it. I have one or two small thoughts, which I'll bring to our next call.",
    '{Best|Talk soon},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Happy to help',
    'Re: {topic}',
    HELLO,
    'Thank you for thinking of me. I would be glad to help with {topic}. Could we find a slot next week to talk it through?',
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Out until tomorrow',
    'Re: {topic}',
    HELLO,
    "Thanks for the message. I'm out of the office until tomorrow, so I'll come back to you then.",
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Thanks for the update',
    'Re: {topic}',
    '{Hi|Hey} {recipient_first_name},',
    'Thanks for the update. Good to see things moving along. {Keep me posted.|Let me know how it goes.}',
    '{Cheers|Best},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Will read this afternoon',
    'Re: {topic}',
    HELLO,
    "Many thanks for sending this over. I'll read it properly {this afternoon|later today} and send you my notes.",
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'reply',
    'Perfect, thanks',
    'Re: {topic}',
    '{Hi|Hey} {recipient_first_name},',
    'Perfect, thanks. That helps a lot with {topic}. {Have a good {day_of_week}.|Enjoy the rest of your {day_of_week}.}',
    '{Cheers|Best},\n{sender_first_name}',
  ),

  // followup: the original sender's answer to a reply (the third message of a thread)
  en(
    'followup',
    'Thanks for getting back',
    'Re: {topic}',
    HELLO,
    "Thanks for getting back to me. I'll keep you {posted|in the loop} as things move along.",
    '{Best|Cheers},\n{sender_first_name}',
  ),
  en(
    'followup',
    'Thanks for confirming',
    'Re: {topic}',
    HELLO,
    "Great, thanks for confirming. I'll put it in the calendar and send the details {shortly|later today}.",
    '{Best|Thanks},\n{sender_first_name}',
  ),
  en(
    'followup',
    'No rush',
    'Re: {topic}',
    '{Hi|Hey} {recipient_first_name},',
    'Thanks, much appreciated. No rush at all on your side. Whenever you get to it is fine.',
    '{Cheers|Best},\n{sender_first_name}',
  ),
  en(
    'followup',
    'Will send an updated version',
    'Re: {topic}',
    HELLO,
    "Thanks for the quick reply. I'll take your points into account and come back to you with an updated version {next week|in a few days}.",
    '{Best|Thanks again},\n{sender_first_name}',
  ),
  en(
    'followup',
    'Pick it up at the next call',
    'Re: {topic}',
    HELLO,
    "Thanks again, that's good to know. Let's pick this up at our next call.",
    '{Best|Talk soon},\n{sender_first_name}',
  ),
];

const GERMAN: DefaultTemplate[] = [
  // initial
  de(
    'initial',
    'Kurze Terminfrage',
    'Kurze Terminfrage',
    HALLO,
    'hättest du {diese Woche|in den nächsten Tagen} eine halbe Stunde Zeit, um über {topic} zu sprechen? Ich würde gern deine Einschätzung hören, bevor wir die nächsten Schritte festlegen. {Nachmittags passt es mir meistens am besten.|Zeitlich bin ich ziemlich flexibel.}',
    '{Viele Grüße|Beste Grüße}\n{sender_first_name}',
  ),
  de(
    'initial',
    'Entwurf zum Gegenlesen',
    '{Entwurf zum Gegenlesen|Kannst du kurz drüberschauen?}',
    HALLO,
    'ich habe einen ersten Entwurf für {topic} fertig und im gemeinsamen Ordner abgelegt. An ein paar Stellen ist er noch etwas holprig, vor allem beim Zeitplan. Könntest du bis {Ende der Woche|Anfang nächster Woche} einen Blick darauf werfen?',
    '{Danke dir und viele Grüße|Vielen Dank und beste Grüße}\n{sender_first_name}',
  ),
  de(
    'initial',
    'Notizen zum Telefonat',
    'Notizen zu unserem Telefonat',
    HALLO,
    'danke, dass du dir {heute|vorhin} Zeit genommen hast. Kurz zusammengefasst: Wir behalten den Zeitplan für {topic} bei, ich passe die Unterlagen an, und nächste Woche sprechen wir noch einmal. Falls ich etwas vergessen habe, sag gern Bescheid.',
    '{Viele Grüße|Beste Grüße}\n{sender_first_name}',
  ),
  de(
    'initial',
    'Dankeschön',
    '{Danke dir|Ein kurzes Dankeschön}',
    HALLO,
    'ich wollte mich kurz bei dir bedanken. Deine Unterstützung für {topic} hat mir diese Woche sehr geholfen. {Der nächste Kaffee geht auf mich.|Beim nächsten Kaffee lade ich dich ein.}',
    '{Viele Grüße|Liebe Grüße}\n{sender_first_name}',
  ),
  de(
    'initial',
    'Kurzer Zwischenstand',
    '{Kurzer Zwischenstand|Kurzes Update}',
    HALLO,
    'ein kurzer Zwischenstand: Für {topic} sind wir gut im Plan, und die offenen Fragen aus der letzten Woche sind größtenteils geklärt. Eine ausführlichere Zusammenfassung schicke ich dir {Anfang nächster Woche|in den nächsten Tagen}. Melde dich gern, falls du vorher etwas brauchst.',
    '{Viele Grüße|Beste Grüße}\n{sender_first_name}',
  ),
  de(
    'initial',
    'Vorstellung einer Kollegin',
    'Vorstellung: Sarah aus unserem Team',
    HALLO,
    'ich möchte dir kurz meine Kollegin Sarah vorstellen. Sie ist seit {letztem Monat|Kurzem} bei uns und kümmert sich ab jetzt mit um {topic}. Ich glaube, ein Gespräch zwischen euch beiden wäre für alle hilfreich. Hättest du nächste Woche Zeit für einen Kaffee mit ihr?',
    '{Viele Grüße|Beste Grüße}\n{sender_first_name}',
  ),

  // reply
  de(
    'reply',
    'Schaue es mir an',
    'Re: {topic}',
    HALLO,
    'danke für deine Nachricht. Ich schaue mir das {morgen früh|heute Nachmittag} in Ruhe an und melde mich dann bei dir.',
    '{Viele Grüße|Beste Grüße}\n{sender_first_name}',
  ),
  de(
    'reply',
    'Klingt gut',
    'Re: {topic}',
    HALLO,
    'danke für die Info, das klingt gut. Wenn du noch etwas von mir brauchst, sag einfach Bescheid.',
    '{Viele Grüße|Liebe Grüße}\n{sender_first_name}',
  ),
  de(
    'reply',
    'Antwort folgt morgen',
    'Re: {topic}',
    HALLO,
    'danke dir. Ich bin heute leider ziemlich eingespannt, antworte dir aber morgen ausführlicher.',
    '{Viele Grüße|Beste Grüße}\n{sender_first_name}',
  ),
  de(
    'reply',
    'Hilft sehr weiter',
    'Re: {topic}',
    HALLO,
    'vielen Dank, das hilft mir sehr weiter. Ich gebe es ans Team weiter und melde mich, falls noch Fragen aufkommen.',
    '{Viele Grüße|Beste Grüße}\n{sender_first_name}',
  ),

  // followup: the original sender's answer to a reply (the third message of a thread)
  de(
    'followup',
    'Danke für die Rückmeldung',
    'Re: {topic}',
    HALLO,
    'danke für die schnelle Rückmeldung. Ich trage es mir in den Kalender ein und schicke dir {später|morgen} die Details.',
    '{Viele Grüße|Beste Grüße}\n{sender_first_name}',
  ),
  de(
    'followup',
    'Halte dich auf dem Laufenden',
    'Re: {topic}',
    HALLO,
    'danke dir, so passt es. Ich halte dich auf dem Laufenden.',
    '{Viele Grüße|Liebe Grüße}\n{sender_first_name}',
  ),
];

const FRENCH: DefaultTemplate[] = [
  // initial
  fr(
    'initial',
    'Petite question',
    'Petite question sur {topic}',
    BONJOUR_TU,
    "Aurais-tu une demi-heure {cette semaine|dans les prochains jours} pour faire le point sur {topic} ? J'aimerais avoir ton avis avant qu'on fixe les prochaines étapes. {Je suis assez flexible sur l'horaire.|Les après-midis m'arrangent plutôt.}",
    '{Bonne journée|À bientôt},\n{sender_first_name}',
  ),
  fr(
    'initial',
    'Document à relire',
    '{Document à relire|Petite relecture ?}',
    BONJOUR_TU,
    "J'ai terminé une première version du document sur {topic} et je l'ai déposée dans le dossier partagé. Certains passages sont encore un peu bruts, surtout la partie sur le calendrier. Pourrais-tu y jeter un œil d'ici {la fin de la semaine|le début de la semaine prochaine} ?",
    "{Merci d'avance|Merci beaucoup},\n{sender_first_name}",
  ),
  fr(
    'initial',
    "Compte rendu d'appel",
    'Compte rendu de notre appel',
    BONJOUR_VOUS,
    "Merci pour votre temps {aujourd'hui|tout à l'heure}. Pour résumer, nous gardons le calendrier prévu pour {topic}, je mets à jour les documents et nous refaisons un point la semaine prochaine. N'hésitez pas à me dire si j'ai oublié quelque chose.",
    '{Bien cordialement|Cordialement|Bonne fin de journée},\n{sender_first_name}',
  ),
  fr(
    'initial',
    'Remerciement',
    '{Merci|Un petit merci}',
    BONJOUR_TU,
    "Un petit mot pour te remercier de ton aide sur {topic}. Ça m'a vraiment facilité la semaine. {Le prochain café est pour moi.|Je te dois un café.}",
    '{À bientôt|Bonne journée},\n{sender_first_name}',
  ),
  fr(
    'initial',
    "Point d'étape",
    "{Point d'étape|Petit point} sur {topic}",
    BONJOUR_VOUS,
    "Un rapide point d'étape sur {topic} : nous sommes dans les temps et la plupart des questions ouvertes la semaine dernière sont réglées. Je vous enverrai un résumé plus complet {en début de semaine prochaine|dans les prochains jours}. N'hésitez pas à revenir vers moi d'ici là si besoin.",
    '{Bien cordialement|Bonne journée},\n{sender_first_name}',
  ),

  // reply
  fr(
    'reply',
    'Je regarde ça',
    'Re: {topic}',
    BONJOUR_TU,
    'Merci pour ton message. Je regarde ça {demain matin|cet après-midi} et je reviens vers toi.',
    '{Bonne journée|À bientôt},\n{sender_first_name}',
  ),
  fr(
    'reply',
    "Merci pour l'information",
    'Re: {topic}',
    BONJOUR_VOUS,
    "Merci pour l'information, c'est très clair. Si vous avez besoin d'autre chose de ma part, n'hésitez pas.",
    '{Bien cordialement|Cordialement},\n{sender_first_name}',
  ),
  fr(
    'reply',
    "Ça m'aide beaucoup",
    'Re: {topic}',
    BONJOUR_TU,
    "Merci beaucoup, ça m'aide vraiment. Je transmets à l'équipe et je te dis si on a des questions.",
    '{À bientôt|Bonne journée},\n{sender_first_name}',
  ),
  fr(
    'reply',
    'Réponse demain',
    'Re: {topic}',
    BONJOUR_TU,
    'Merci pour ton retour. Ma journée est assez chargée, mais je te réponds plus en détail demain.',
    '{Bonne soirée|À demain},\n{sender_first_name}',
  ),

  // followup: the original sender's answer to a reply (the third message of a thread)
  fr(
    'followup',
    'Merci pour ta réponse',
    'Re: {topic}',
    BONJOUR_TU,
    "Merci pour ta réponse rapide. Je bloque le créneau dans mon agenda et je t'envoie les détails {plus tard dans la journée|demain}.",
    '{Bonne journée|À bientôt},\n{sender_first_name}',
  ),
  fr(
    'followup',
    'Je te tiens au courant',
    'Re: {topic}',
    BONJOUR_TU,
    "Merci, c'est parfait comme ça. Je te tiens au courant de la suite.",
    '{À bientôt|Bonne journée},\n{sender_first_name}',
  ),
];

const SPANISH: DefaultTemplate[] = [
  // initial
  es(
    'initial',
    'Pregunta rápida',
    'Una pregunta rápida sobre {topic}',
    HOLA,
    '¿Tendrías media hora {esta semana|en los próximos días} para hablar sobre {topic}? Me gustaría conocer tu opinión antes de decidir los siguientes pasos. {Por las tardes me viene mejor, pero me adapto.|Tengo bastante flexibilidad de horario.}',
    '{Un saludo|Saludos|Gracias},\n{sender_first_name}',
  ),
  es(
    'initial',
    'Borrador para revisar',
    '{Borrador para revisar|¿Le echas un vistazo?}',
    'Hola {recipient_first_name},',
    'He terminado un primer borrador sobre {topic} y lo he dejado en la carpeta compartida. Algunas partes todavía están un poco verdes, sobre todo la del calendario. ¿Podrías echarle un vistazo {antes de que acabe la semana|a principios de la semana que viene}?',
    '{Muchas gracias|Gracias de antemano},\n{sender_first_name}',
  ),
  es(
    'initial',
    'Resumen de la llamada',
    'Resumen de nuestra llamada',
    'Hola {recipient_first_name},',
    'Gracias por tu tiempo {hoy|esta mañana}. Resumiendo: mantenemos el calendario previsto para {topic}, yo actualizo los documentos y volvemos a hablar la semana que viene. Si se me ha pasado algo, dímelo.',
    '{Un saludo|Saludos},\n{sender_first_name}',
  ),
  es(
    'initial',
    'Agradecimiento',
    '{Gracias por tu ayuda|Mil gracias}',
    HOLA,
    'Solo quería darte las gracias por tu ayuda con {topic}. Me has facilitado mucho la semana. {El próximo café corre de mi cuenta.|Te debo un café.}',
    '{Un abrazo|Un saludo},\n{sender_first_name}',
  ),
  es(
    'initial',
    'Novedades',
    'Novedades sobre {topic}',
    'Hola {recipient_first_name},',
    'Te cuento brevemente cómo va todo: con {topic} vamos según lo previsto y casi todas las dudas de la semana pasada están resueltas. Te enviaré un resumen más completo {a principios de la semana que viene|en los próximos días}. Si necesitas algo antes, avísame.',
    '{Un saludo|Saludos},\n{sender_first_name}',
  ),

  // reply
  es(
    'reply',
    'Lo miro con calma',
    'Re: {topic}',
    HOLA,
    'Gracias por tu mensaje. Lo miro con calma {mañana por la mañana|esta tarde} y te digo algo.',
    '{Un saludo|Saludos},\n{sender_first_name}',
  ),
  es(
    'reply',
    'Me parece bien',
    'Re: {topic}',
    HOLA,
    'Gracias por avisar, me parece bien. Si necesitas algo más de mi parte, dímelo.',
    '{Un saludo|Saludos},\n{sender_first_name}',
  ),
  es(
    'reply',
    'Me ayuda mucho',
    'Re: {topic}',
    'Hola {recipient_first_name},',
    'Muchas gracias, me ayuda mucho. Se lo paso al equipo y te comento si surge alguna duda.',
    '{Un saludo|Un abrazo},\n{sender_first_name}',
  ),
  es(
    'reply',
    'Respondo mañana',
    'Re: {topic}',
    HOLA,
    'Gracias por escribir. Hoy tengo el día bastante complicado, pero mañana te contesto con más detalle.',
    '{Un saludo|Saludos},\n{sender_first_name}',
  ),

  // followup: the original sender's answer to a reply (the third message of a thread)
  es(
    'followup',
    'Gracias por responder',
    'Re: {topic}',
    'Hola {recipient_first_name},',
    'Gracias por responder tan rápido. Lo apunto en el calendario y te mando los detalles {más tarde|mañana}.',
    '{Un saludo|Saludos},\n{sender_first_name}',
  ),
  es(
    'followup',
    'Te mantengo al tanto',
    'Re: {topic}',
    HOLA,
    'Perfecto, gracias. Te mantengo al tanto de cómo avanza.',
    '{Un saludo|Un abrazo},\n{sender_first_name}',
  ),
];

export const DEFAULT_TEMPLATES: ReadonlyArray<DefaultTemplate> = [...ENGLISH, ...GERMAN, ...FRENCH, ...SPANISH];

/** Neutral work topics for `{topic}` in English: each reads after "about", "on" or "for". */
export const TOPICS: readonly string[] = [
  'the Q3 roadmap',
  "next week's offsite",
  'the budget review',
  'the new onboarding process',
  'the customer survey results',
  'the team workshop',
  'the supplier contracts',
  'the office move',
  'the hiring plan',
  'the product launch timeline',
  'the quarterly report',
  'the training schedule',
  'the intranet redesign',
  'the annual planning',
  'the project kickoff',
  'the support handbook',
  'the board presentation',
  'the spring conference',
  'the travel policy update',
  'the partner meeting',
  'the design review',
  'the data migration',
  'the holiday schedule',
  'the release notes',
  'the security review',
  'the team retrospective',
  'the reporting dashboard',
  'the client workshop',
  'the documentation update',
  'the pilot project',
  'the summer schedule',
  'the procurement process',
  'the new meeting rhythm',
  'the year-end review',
  'the handover plan',
  'the internal audit',
];

/**
 * Topics per language. German ones are feminine, neuter or plural (the article stays the same
 * after the accusative prepositions the templates use); French and Spanish ones read after
 * "sur" / "pour" and "sobre" / "para".
 */
export const TOPICS_BY_LANGUAGE: Record<string, readonly string[]> = {
  en: TOPICS,
  de: [
    'die Quartalsplanung',
    'die Budgetplanung',
    'das Onboarding der neuen Kollegen',
    'die Ergebnisse der Kundenumfrage',
    'das Team-Offsite nächste Woche',
    'die Lieferantenverträge',
    'die Jahresplanung',
    'das Projekt-Kick-off',
    'die Schulungstermine',
    'die neue Reiserichtlinie',
    'das Partnertreffen',
    'die Datenmigration',
    'die Urlaubsplanung',
    'die Präsentation für die Geschäftsführung',
    'das Sicherheitskonzept',
    'die Retrospektive',
    'die Zahlen für das dritte Quartal',
    'die Frühjahrskonferenz',
    'das Pilotprojekt',
    'die Dokumentation',
  ],
  fr: [
    'la feuille de route du troisième trimestre',
    'le séminaire de la semaine prochaine',
    'la revue du budget',
    "le nouveau processus d'intégration",
    "les résultats de l'enquête client",
    "l'atelier d'équipe",
    'les contrats fournisseurs',
    'le déménagement des bureaux',
    'le plan de recrutement',
    'le rapport trimestriel',
    'le planning des formations',
    "la refonte de l'intranet",
    'la planification annuelle',
    'le lancement du projet',
    'la présentation au comité de direction',
    'la conférence de printemps',
    'la nouvelle politique de déplacements',
    'la migration des données',
    'le planning des congés',
    'le projet pilote',
  ],
  es: [
    'la hoja de ruta del tercer trimestre',
    'el encuentro del equipo de la próxima semana',
    'la revisión del presupuesto',
    'el nuevo proceso de incorporación',
    'los resultados de la encuesta a clientes',
    'el taller del equipo',
    'los contratos con proveedores',
    'la mudanza de la oficina',
    'el plan de contratación',
    'el informe trimestral',
    'el calendario de formación',
    'la planificación anual',
    'el arranque del proyecto',
    'la presentación para la dirección',
    'la conferencia de primavera',
    'la nueva política de viajes',
    'la migración de datos',
    'el calendario de vacaciones',
    'el proyecto piloto',
    'la documentación interna',
  ],
};

/** Fictional, neutral company names for `{company}`. */
export const COMPANIES: readonly string[] = [
  'Northfield Logistics',
  'Alder Creek Consulting',
  'Brightwater Systems',
  'Cedar Point Partners',
  'Elmstead Engineering',
  'Foxglove Studio',
  'Granite Ridge Group',
  'Halden Architects',
  'Ironbridge Software',
  'Juniper Lane Design',
  'Kestrel Research',
  'Larkspur Health',
  'Meadowbrook Foods',
  'Oakhurst Manufacturing',
  'Pinecrest Advisory',
  'Quarry Hill Labs',
  'Redwood Harbor Services',
  'Silverleaf Media',
  'Thornbury Legal',
  'Willowmere Education',
];
