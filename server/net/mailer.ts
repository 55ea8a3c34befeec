// Email out through the SMTP server named by TOLLGATE_SMTP_URL (nodemailer).
// The SMTP server is the operator's own infrastructure, configured in the
// environment, so it is not subject to the outbound address rules that guard
// URLs configured through the API.
import nodemailer from "nodemailer";

export interface MailMessage {
  to: string[];
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<{ messageId: string }>;
  close(): void;
}

export function createMailer(smtpUrl: string, from: string): Mailer {
  // Bounded waits: a stalled SMTP server fails the attempt, which is retried later.
  const transport = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 }, { from });
  return {
    async send(message) {
      const info = await transport.sendMail({ to: message.to, subject: message.subject, text: message.text, html: message.html });
      return { messageId: info.messageId };
    },
    close: () => transport.close(),
  };
}
