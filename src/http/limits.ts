/** Request body limits of API.md: 1 MiB in general, 10 MiB for template imports. */
export const BODY_LIMIT = 1024 * 1024;
export const IMPORT_BODY_LIMIT = 10 * 1024 * 1024;
