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
 * original subject, prefixed "Re:". The templates of each language are in their own
 * default-templates-<language>.ts; this file puts them together with the topics and companies.
 */

import { type DefaultTemplate } from './default-template.js';
import { ENGLISH } from './default-templates-en.js';
import { GERMAN } from './default-templates-de.js';
import { FRENCH } from './default-templates-fr.js';
import { SPANISH } from './default-templates-es.js';
export { type DefaultTemplate } from './default-template.js';

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
