// The built-in Spanish templates: first messages, replies and follow-ups (see default-templates.ts).
import type { TemplateType } from './templates.schemas.js';
import { type DefaultTemplate, body } from './default-template.js';

const es = (type: TemplateType, name: string, subject: string, ...paragraphs: string[]): DefaultTemplate => ({
  name,
  type,
  language: 'es',
  subject,
  body: body(...paragraphs),
});
const HOLA = '{Hola|Buenas} {recipient_first_name},';

export const SPANISH: DefaultTemplate[] = [
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
