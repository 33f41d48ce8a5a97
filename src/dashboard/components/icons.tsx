import type { JSX } from 'preact';

// Line icons drawn on a 24-unit grid; decorative unless given a label.
type IconProps = { size?: number; label?: string; class?: string };

function icon(paths: JSX.Element) {
  return function Icon({ size = 18, label, class: className }: IconProps) {
    return (
      <svg
        class={className ? `icon ${className}` : 'icon'}
        width={size}
        height={size}
        viewBox="0 0 24 24"
        fill="none"
        stroke="currentColor"
        stroke-width="1.8"
        stroke-linecap="round"
        stroke-linejoin="round"
        aria-hidden={label ? undefined : 'true'}
        role={label ? 'img' : undefined}
        aria-label={label}
        focusable="false"
      >
        {paths}
      </svg>
    );
  };
}

export const IconOverview = icon(
  <>
    <rect x="3" y="3" width="7" height="9" rx="1.5" />
    <rect x="14" y="3" width="7" height="5" rx="1.5" />
    <rect x="14" y="12" width="7" height="9" rx="1.5" />
    <rect x="3" y="16" width="7" height="5" rx="1.5" />
  </>,
);
export const IconMailbox = icon(
  <>
    <path d="M22 12h-6l-2 3h-4l-2-3H2" />
    <path d="M5.45 5.11 2 12v6a2 2 0 0 0 2 2h16a2 2 0 0 0 2-2v-6l-3.45-6.89A2 2 0 0 0 16.76 4H7.24a2 2 0 0 0-1.79 1.11z" />
  </>,
);
export const IconTemplate = icon(
  <>
    <path d="M14 3H7a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V8z" />
    <path d="M14 3v5h5M9 13h6M9 17h6M9 9h2" />
  </>,
);
export const IconReport = icon(
  <>
    <path d="M3 3v18h18" />
    <path d="M7 15l4-4 3 3 5-6" />
  </>,
);
export const IconPlus = icon(<path d="M12 5v14M5 12h14" />);
export const IconPause = icon(<path d="M8.5 5v14M15.5 5v14" />);
export const IconPlay = icon(<path d="M7 4.5v15l12-7.5z" />);
export const IconEdit = icon(
  <>
    <path d="M12 20h9" />
    <path d="M16.5 3.5a2.12 2.12 0 0 1 3 3L7 19l-4 1 1-4z" />
  </>,
);
export const IconTrash = icon(
  <>
    <path d="M3 6h18M8 6V4a1 1 0 0 1 1-1h6a1 1 0 0 1 1 1v2M19 6l-1 14a2 2 0 0 1-2 2H8a2 2 0 0 1-2-2L5 6" />
    <path d="M10 11v6M14 11v6" />
  </>,
);
export const IconCopy = icon(
  <>
    <rect x="9" y="9" width="12" height="12" rx="2" />
    <path d="M5 15H4a1 1 0 0 1-1-1V4a1 1 0 0 1 1-1h10a1 1 0 0 1 1 1v1" />
  </>,
);
export const IconDownload = icon(<path d="M12 3v12M7 10l5 5 5-5M4 21h16" />);
export const IconUpload = icon(<path d="M12 21V9M7 14l5-5 5 5M4 3h16" />);
export const IconLogOut = icon(<path d="M9 21H5a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2h4M16 17l5-5-5-5M21 12H9" />);
export const IconMenu = icon(<path d="M4 6h16M4 12h16M4 18h16" />);
export const IconClose = icon(<path d="M18 6 6 18M6 6l12 12" />);
export const IconAlert = icon(
  <>
    <path d="M10.3 3.9 1.8 18a2 2 0 0 0 1.7 3h17a2 2 0 0 0 1.7-3L13.7 3.9a2 2 0 0 0-3.4 0z" />
    <path d="M12 9v4M12 17h.01" />
  </>,
);
export const IconCheck = icon(<path d="M20 6 9 17l-5-5" />);
export const IconShuffle = icon(<path d="M16 3h5v5M4 20 21 3M21 16v5h-5M15 15l6 6M4 4l5 5" />);
export const IconExternal = icon(
  <path d="M15 3h6v6M10 14 21 3M18 13v6a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2V8a2 2 0 0 1 2-2h6" />,
);
export const IconBack = icon(<path d="M19 12H5M12 19l-7-7 7-7" />);
export const IconTrendDown = icon(<path d="M23 18l-9.5-9.5-5 5L1 6M17 18h6v-6" />);
export const IconGlobe = icon(
  <>
    <circle cx="12" cy="12" r="9" />
    <path d="M3 12h18M12 3a14 14 0 0 1 0 18M12 3a14 14 0 0 0 0 18" />
  </>,
);
export const IconKey = icon(
  <>
    <circle cx="7.5" cy="15.5" r="4.5" />
    <path d="M10.7 12.3 21 2M16 7l3 3M18.5 4.5l2 2" />
  </>,
);
export const IconRefresh = icon(<path d="M21 12a9 9 0 1 1-3-6.7L21 8M21 3v5h-5" />);
export const IconSearch = icon(
  <>
    <circle cx="11" cy="11" r="7" />
    <path d="m20 20-3.5-3.5" />
  </>,
);
export const IconLock = icon(
  <>
    <rect x="4" y="11" width="16" height="10" rx="2" />
    <path d="M8 11V7a4 4 0 0 1 8 0v4" />
  </>,
);
