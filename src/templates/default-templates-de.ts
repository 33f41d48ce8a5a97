// The built-in German templates: first messages, replies and follow-ups (see default-templates.ts).
import type { TemplateType } from './templates.schemas.js';
import { type DefaultTemplate, body } from './default-template.js';

const de = (type: TemplateType, name: string, subject: string, ...paragraphs: string[]): DefaultTemplate => ({
  name,
  type,
  language: 'de',
  subject,
  body: body(...paragraphs),
});
const HALLO = '{Hallo|Hi} {recipient_first_name},';

export const GERMAN: DefaultTemplate[] = [
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
