// The built-in French templates: first messages, replies and follow-ups (see default-templates.ts).
import type { TemplateType } from './templates.schemas.js';
import { type DefaultTemplate, body } from './default-template.js';

const fr = (type: TemplateType, name: string, subject: string, ...paragraphs: string[]): DefaultTemplate => ({
  name,
  type,
  language: 'fr',
  subject,
  body: body(...paragraphs),
});
const BONJOUR_TU = '{Bonjour|Salut} {recipient_first_name},';
const BONJOUR_VOUS = 'Bonjour {recipient_first_name},';

export const FRENCH: DefaultTemplate[] = [
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
